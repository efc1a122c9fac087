"""Evaluate one strategy on one trajectory at several budgets in a single replay (`replay_steps`).

Each step's record is made as the step is replayed and the contexts are then dropped, so memory is
bounded by the largest context. The result is a JSON-ready record: run fields plus, per budget, the
list of per-step records (small: counts, and the kept steps as runs of indices).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from contextweaver.config import ModelConfig
from contextweaver.eval.context_track import ContextTrack
from contextweaver.eval.edits import edit_evidence
from contextweaver.eval.evidence import StepEvidence, history_evidence, next_step_evidence
from contextweaver.eval.frontier import all_sources, bucket, latest_of, window_record
from contextweaver.eval.kept_runs import KeptRuns
from contextweaver.eval.recall_reach import reach_record
from contextweaver.eval.replay import Limit, ReplayStep, replay_steps
from contextweaver.eval.state_probes import StateTruth, cut, edit_old_texts, state_truth, unmarked_drop
from contextweaver.formats.base import Trajectory
from contextweaver.formats.discovery import file_id as file_id  # re-exported: the runner's unit ids
from contextweaver.formats.discovery import run_id
from contextweaver.nodes.extract import extraction_of, root_node
from contextweaver.prompt_cache import PrefixCache
from contextweaver.records import WovenContext
from contextweaver.strategies import Built, build_strategy, cw_settings, spec
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


@dataclass(frozen=True)
class RunNeeds:
    """What each step of a run needs from the context before it, found once per run (keyed by the step
    that needs it): evidence items, the edits' texts, where each item was last seen, history evidence,
    the state across a cut, and the old texts an edit replaces."""

    evidence: list[StepEvidence]
    items: dict[int, frozenset[str]]
    edits: dict[int, frozenset[str]]
    every_source: dict[int, dict[str, list[int]]]
    sources: dict[int, dict[str, int]]
    history: dict[int, frozenset[str]]
    truth: dict[int, StateTruth]
    replaced: dict[int, frozenset[str]]

    @classmethod
    def of(cls, trajectory: Trajectory) -> RunNeeds:
        evidence = next_step_evidence(trajectory)
        items = {e.index: e.items for e in evidence}
        edits = {e.index: e.items for e in edit_evidence(trajectory, evidence)}
        every_source = all_sources(trajectory, evidence)
        sources = latest_of(every_source)
        history = history_evidence(trajectory)
        truth = state_truth(trajectory)
        replaced = edit_old_texts(trajectory)
        return cls(evidence, items, edits, every_source, sources, history, truth, replaced)

    def asked(self) -> set[str]:
        """Every item any step asks for: what a context is searched for."""
        return set().union(*self.items.values(), *self.edits.values(), *self.history.values(),
                           *self.sources.values(), *(t.changed | t.failing for t in self.truth.values()),
                           *self.replaced.values())  # fmt: skip


@dataclass
class Measures:
    """One budget's running measures over the replay: the provider's prefix cache, what the contexts hold,
    the kept steps as runs, and the recall marks seen."""

    cache: PrefixCache
    track: ContextTrack
    kept: KeptRuns = field(default_factory=KeptRuns)
    marks: dict[int, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, asked: set[str]) -> Measures:
        cache = PrefixCache()
        return cls(cache, ContextTrack(asked, cache.tokens))


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
    needs = RunNeeds.of(trajectory)
    settings = cw_settings(overrides) if spec(strategy_name).baseline is None else {}
    built = build_strategy(strategy_name, settings, model_config=model_config, seed=seed)
    asked = needs.asked()
    measures = {key: Measures.of(asked) for key in tokens_of}
    steps: dict[str, list[dict[str, Any]]] = {key: [] for key in asked_at}  # a refused budget: no steps
    last = len(trajectory.steps)
    starved: dict[Limit, BudgetError] = {}  # a budget that cannot hold a step: the run is refused at it
    replayed_steps = replay_steps(trajectory, built.strategy, replayed_at, built.model, refused=starved)
    for replayed in replayed_steps if replayed_at else ():
        if replayed.index >= last:  # no next step to need anything
            break
        for budget, tokens in tokens_of.items():
            if tokens not in starved:
                steps[budget].append(step_record(trajectory, needs, measures[budget], replayed, tokens))
    for budget, tokens in tokens_of.items():
        if tokens in starved:
            refused[budget] = starved_refusal(starved[tokens])
            steps[budget] = []
    return {
        "trajectory": instance,
        "group": repo_group(instance),
        "source": trajectory.source,
        "format": trajectory.format,
        "strategy": strategy_name,
        "seed": seed,
        "steps_total": last,
        "llm": llm_record(built),
        "budgets": steps,
        "budget_tokens": {key: tokens for key, tokens in tokens_of.items() if key == HALF},
        "refused": refused,
        "windows": window_record(trajectory, needs.evidence),
    }


def step_record(
    trajectory: Trajectory, needs: RunNeeds, measures: Measures, replayed: ReplayStep, tokens: Limit
) -> dict[str, Any]:
    """One step's record at one budget: how much of what the next step needs its context holds."""
    following = replayed.index + 1
    needed = needs.items.get(following, frozenset())
    context = replayed.contexts[tokens]
    track = measures.track
    track.update(context.messages)
    held = track.found(needed)
    record: dict[str, Any] = {
        "step": replayed.index,
        "tokens": context.tokens,
        "full_tokens": context.full_history_tokens,
        "items": len(needed),
        "covered": len(held),
        "kept": [list(run) for run in measures.kept.update(context.shown)],
        "seconds": replayed.add_seconds + replayed.weave_seconds[tokens],
    }
    record["by_distance"] = by_distance(track, needs.sources.get(following, {}), replayed.index)
    record.update(
        reach_record(context, needed, held, needs.every_source.get(following, {}), trajectory, measures.marks)
    )
    history_needed = needs.history.get(following, frozenset())
    record["history_items"] = len(history_needed)
    record["history_covered"] = track.covered(history_needed)
    edit_needed = needs.edits.get(following)
    if edit_needed is not None:
        record["edit_items"] = len(edit_needed)
        record["edit_covered"] = track.covered(edit_needed)
    if cut(context):
        record.update(across_cut(track, needs, replayed.index, context))
    if track.shared_tokens is not None:
        shared = track.shared_tokens
        record["prefix_share"] = shared / context.tokens if context.tokens else 1.0
    record.update(cache_record(measures.cache, context))
    return record


def by_distance(track: ContextTrack, step_sources: dict[str, int], index: int) -> dict[str, list[int]]:
    """Per distance bucket (steps back to where an item was last seen): [items held, items needed]."""
    distance: dict[str, list[int]] = {}
    present = track.found(frozenset(step_sources))
    for item, source in step_sources.items():
        counts = distance.setdefault(bucket(index - source), [0, 0])
        counts[0] += item in present
        counts[1] += 1
    return distance


def across_cut(track: ContextTrack, needs: RunNeeds, index: int, context: WovenContext) -> dict[str, Any]:
    """State across a cut: what the agent changed and what fails, held or not; the old texts the next
    edit replaces."""
    state = needs.truth[index]
    record: dict[str, Any] = dict(
        trail_items=len(state.changed), trail_covered=track.covered(state.changed),
        failing_items=len(state.failing), failing_covered=track.covered(state.failing),
        cuts=1, unmarked=int(unmarked_drop(context)),
    )  # fmt: skip
    old = needs.replaced.get(index + 1)
    if old:
        record.update(fresh_items=len(old), fresh_covered=track.covered(old))
    return record


def starved_refusal(exc: BudgetError) -> dict[str, int]:
    """A budget that could not hold a step: the root's tokens and the least budget that holds it."""
    if exc.need is not None and exc.budget is not None:
        return {"root": exc.need.root, "least": exc.budget.least(exc.need)}
    return {"root": 0, "least": 0}  # a strategy's own refusal, without the numbers


def llm_record(built: Built) -> dict[str, Any]:
    """The memory model's calls, tokens, failures and seconds over the run."""
    usage = getattr(built.model, "usage", None)
    total = usage.total.as_dict() if usage is not None else {}
    return {
        "calls": total.get("calls", 0),
        "prompt_tokens": total.get("prompt_tokens", 0),
        "completion_tokens": total.get("completion_tokens", 0),
        "failures": total.get("failures", 0),
        "seconds": built.model.seconds if built.model is not None else 0.0,
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
