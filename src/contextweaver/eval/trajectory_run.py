"""Evaluate one strategy on one trajectory at several budgets in a single replay (`replay_steps`).

Each step's record is made as the step is replayed and the contexts are then dropped, so memory is
bounded by the largest context. The result is a JSON-ready record: run fields plus, per budget, the
list of per-step records (small: counts, and the kept steps as runs of indices).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

from contextweaver.config import ModelConfig
from contextweaver.eval.context_track import ContextTrack
from contextweaver.eval.edits import edit_evidence
from contextweaver.eval.evidence import history_evidence, next_step_evidence
from contextweaver.eval.frontier import all_sources, bucket, latest_of, window_record
from contextweaver.eval.kept_runs import KeptRuns
from contextweaver.eval.recall_reach import reach_record
from contextweaver.eval.replay import Limit, replay_steps
from contextweaver.eval.state_probes import cut, edit_old_texts, state_truth, unmarked_drop
from contextweaver.formats.base import Trajectory
from contextweaver.formats.discovery import file_id as file_id  # re-exported: the runner's unit ids
from contextweaver.formats.discovery import run_id
from contextweaver.nodes.extract import extraction_of, root_node
from contextweaver.prompt_cache import PrefixCache
from contextweaver.records import WovenContext
from contextweaver.strategies import build_strategy, cw_settings, spec
from contextweaver.weaving.budget import Budget, BudgetError, Need

HALF = "half"
"""A run's own scale: each run at half its full history's tokens (`run_budget`)."""
EvalBudget = int | str | None
"""A token count, None (unbounded) or `HALF`."""


def budget_key(budget: EvalBudget) -> str:
    return "none" if budget is None else str(budget)


def run_budget(budget: EvalBudget, trajectory: Trajectory) -> Limit:
    """The tokens `budget` stands for on this run: `HALF` is half the full history (root and every
    step in full), never below what the root needs (its tokens and a quarter, in hundreds)."""
    if budget != HALF:
        return budget if budget is None else int(budget)
    root = root_node(trajectory.root).full_tokens if trajectory.root else 0
    full = root + sum(extraction_of(step).full_tokens for step in trajectory.steps)
    return max(full // 2, -(-root * 5 // 4 // 100) * 100)


def parse_budgets(text: str) -> list[EvalBudget]:
    """`4000,8000,half,none` -> [4000, 8000, "half", None] (also accepts 4k, 16K, unbounded)."""
    out: list[EvalBudget] = []
    for part in (p.strip().lower() for p in text.split(",") if p.strip()):
        if part in ("none", "unbounded", "inf", "full"):
            out.append(None)
            continue
        if part == HALF:
            out.append(HALF)
            continue
        match = re.fullmatch(r"(\d+)(k?)", part)
        if not match:
            raise ValueError(f"budget {part!r} is not a token count: use e.g. 4000,8k,half,none")
        out.append(int(match.group(1)) * (1000 if match.group(2) else 1))
    if not out:
        raise ValueError("no budgets given: use e.g. 4000,8000,16000,none")
    return list(dict.fromkeys(out))


def trajectory_id(trajectory: Trajectory, fallback: str = "") -> str:
    """The run's id (`formats.discovery.run_id`); `fallback` is its file when the run names none."""
    return run_id(trajectory, fallback)


def repo_group(instance_id: str) -> str:
    """`django__django-11276` -> `django`; the repository prefix of a SWE-bench instance id."""
    if "__" in instance_id:
        return instance_id.split("__", 1)[0]
    return re.split(r"[-_.]", instance_id, maxsplit=1)[0] or instance_id


def evaluate(
    trajectory: Trajectory,
    strategy_name: str,
    budgets: Sequence[EvalBudget],
    *,
    seed: int = 0,
    overrides: Sequence[str] = (),
    model_config: ModelConfig | None = None,
) -> dict[str, Any]:
    """Every per-step number the report needs, for one (trajectory, strategy, seed), all budgets
    (`HALF` replayed at this run's own `run_budget`, recorded under "half")."""
    random.seed(seed)
    asked_at = {budget_key(b): run_budget(b, trajectory) for b in budgets}
    refused = refusals(trajectory, asked_at)
    tokens_of = {key: tokens for key, tokens in asked_at.items() if key not in refused}
    replayed_at = list(dict.fromkeys(tokens_of.values()))
    instance = trajectory_id(trajectory)
    evidence = next_step_evidence(trajectory)
    items = {e.index: e.items for e in evidence}
    edits = {e.index: e.items for e in edit_evidence(trajectory, evidence)}
    every_source = all_sources(trajectory, evidence)
    sources = latest_of(every_source)
    history = history_evidence(trajectory)
    truth = state_truth(trajectory)
    replaced = edit_old_texts(trajectory)
    settings = cw_settings(overrides) if spec(strategy_name).baseline is None else {}
    built = build_strategy(strategy_name, settings, model_config=model_config, seed=seed)
    asked = set().union(*items.values(), *edits.values(), *history.values(), *sources.values(),
                        *(t.changed | t.failing for t in truth.values()), *replaced.values())  # fmt: skip
    caches = {key: PrefixCache() for key in tokens_of}
    tracks = {key: ContextTrack(asked, caches[key].tokens) for key in tokens_of}
    kept_runs = {key: KeptRuns() for key in tokens_of}
    marks: dict[str, dict[int, Any]] = {key: {} for key in tokens_of}
    steps: dict[str, list[dict[str, Any]]] = {key: [] for key in asked_at}  # a refused budget: no steps
    last = len(trajectory.steps)
    starved: dict[Limit, BudgetError] = {}  # a budget that cannot hold a step: the run is refused at it
    replayed_steps = replay_steps(trajectory, built.strategy, replayed_at, built.model, refused=starved)
    for replayed in replayed_steps if replayed_at else ():
        if replayed.index >= last:  # no next step to need anything
            break
        needed = items.get(replayed.index + 1, frozenset())
        edit_needed = edits.get(replayed.index + 1)
        for budget, tokens in tokens_of.items():
            if tokens in starved:
                continue
            context = replayed.contexts[tokens]
            track = tracks[budget]
            track.update(context.messages)
            held = track.found(needed)
            record: dict[str, Any] = {
                "step": replayed.index,
                "tokens": context.tokens,
                "full_tokens": context.full_history_tokens,
                "items": len(needed),
                "covered": len(held),
                "kept": [list(run) for run in kept_runs[budget].update(context.shown)],
                "seconds": replayed.add_seconds + replayed.weave_seconds[tokens],
            }
            distance: dict[str, list[int]] = {}
            step_sources = sources.get(replayed.index + 1, {})
            present = track.found(frozenset(step_sources))
            for item, source in step_sources.items():
                counts = distance.setdefault(bucket(replayed.index - source), [0, 0])
                counts[0] += item in present
                counts[1] += 1
            record["by_distance"] = distance
            record.update(
                reach_record(
                    context, needed, held, every_source.get(replayed.index + 1, {}), trajectory, marks[budget]
                )
            )
            history_needed = history.get(replayed.index + 1, frozenset())
            record["history_items"] = len(history_needed)
            record["history_covered"] = track.covered(history_needed)
            if edit_needed is not None:
                record["edit_items"] = len(edit_needed)
                record["edit_covered"] = track.covered(edit_needed)
            if cut(context):  # state across the cut: what the agent changed and what fails
                state = truth[replayed.index]
                record.update(trail_items=len(state.changed), trail_covered=track.covered(state.changed),
                              failing_items=len(state.failing), failing_covered=track.covered(state.failing),
                              cuts=1, unmarked=int(unmarked_drop(context)))  # fmt: skip
                old = replaced.get(replayed.index + 1)
                if old:
                    record.update(fresh_items=len(old), fresh_covered=track.covered(old))
            if track.shared_tokens is not None:
                shared = track.shared_tokens
                record["prefix_share"] = shared / context.tokens if context.tokens else 1.0
            record.update(cache_record(caches[budget], context))
            steps[budget].append(record)
    for budget, tokens in tokens_of.items():
        if tokens in starved:
            exc = starved[tokens]
            if exc.need is not None and exc.budget is not None:
                refused[budget] = {"root": exc.need.root, "least": exc.budget.least(exc.need)}
            else:  # a strategy's own refusal, without the numbers
                refused[budget] = {"root": 0, "least": 0}
            steps[budget] = []
    usage = getattr(built.model, "usage", None)
    total = usage.total.as_dict() if usage is not None else {}
    return {
        "trajectory": instance,
        "group": repo_group(instance),
        "source": trajectory.source,
        "format": trajectory.format,
        "strategy": strategy_name,
        "seed": seed,
        "steps_total": last,
        "llm": {
            "calls": total.get("calls", 0),
            "prompt_tokens": total.get("prompt_tokens", 0),
            "completion_tokens": total.get("completion_tokens", 0),
            "failures": total.get("failures", 0),
            "seconds": built.model.seconds if built.model is not None else 0.0,
        },
        "budgets": steps,
        "budget_tokens": {key: tokens for key, tokens in tokens_of.items() if key == HALF},
        "refused": refused,
        "windows": window_record(trajectory, evidence),
    }


def refusals(trajectory: Trajectory, budgets: Mapping[str, Limit]) -> dict[str, dict[str, int]]:
    """The budgets below this run's system prompt and task, which every context keeps verbatim: each with the
    root's tokens and the least budget that holds it. The run is measured at the others."""
    numbers = {key: tokens for key, tokens in budgets.items() if tokens is not None}
    if not numbers or not trajectory.root:
        return {}
    need = Need(root_node(trajectory.root).full_tokens)
    return {
        key: {"root": need.root, "least": Budget(tokens).least(need)}
        for key, tokens in numbers.items()
        if not Budget(tokens).holds(need)
    }


def cache_record(cache: PrefixCache, context: WovenContext) -> dict[str, Any]:
    """The provider-cache fields of a step's record: tokens served from cache and input billed."""
    use = cache.request(context.messages)
    record: dict[str, Any] = {"cached": use.cached["anthropic"], "compacted": context.compacted}
    record.update({f"billed_{provider}": round(billed, 1) for provider, billed in use.billed.items()})
    return record
