"""Evaluate one strategy on one trajectory at several budgets in a single replay.

Same contract as `contextweaver.eval.replay.replay` (after step k is added, take the context the agent
would get before step k+1; nothing of step k+1 is visible), but each step is added once and the
context is then woven at every budget: adding a step is the strategy's expensive part (node facts,
analyzer, memory-model calls) and does not depend on the budget. The result is a JSON-ready record.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contextweaver.config import ModelConfig
from contextweaver.eval.edits import edit_evidence
from contextweaver.eval.evidence import covered, history_evidence, next_step_evidence
from contextweaver.eval.frontier import bucket, latest_sources, window_record
from contextweaver.eval.metrics import MessageTokens, common_prefix_tokens
from contextweaver.formats.base import Trajectory
from contextweaver.prompt_cache import PrefixCache
from contextweaver.protocols import Strategy
from contextweaver.strategies import build_strategy, cw_settings, spec
from contextweaver.types import WovenContext

Budget = int | None


def budget_key(budget: Budget) -> str:
    return "none" if budget is None else str(budget)


def parse_budgets(text: str) -> list[Budget]:
    """`4000,8000,none` -> [4000, 8000, None] (also accepts 4k, 16K, unbounded)."""
    out: list[Budget] = []
    for part in (p.strip().lower() for p in text.split(",") if p.strip()):
        if part in ("none", "unbounded", "inf", "full"):
            out.append(None)
            continue
        match = re.fullmatch(r"(\d+)(k?)", part)
        if not match:
            raise ValueError(f"budget {part!r} is not a token count: use e.g. 4000,8k,none")
        out.append(int(match.group(1)) * (1000 if match.group(2) else 1))
    if not out:
        raise ValueError("no budgets given: use e.g. 4000,8000,16000,none")
    return list(dict.fromkeys(out))


def trajectory_id(trajectory: Trajectory, fallback: str = "") -> str:
    """The run's instance id, else the file name without its trajectory suffixes."""
    found = trajectory.meta.get("instance_id")
    if found:
        return str(found)
    return file_id(trajectory.source or fallback)


def file_id(path: str) -> str:
    """`runs/django__django-1.traj.json` -> `django__django-1`: a run's id from its file name."""
    name = Path(path).name
    for suffix in (".jsonl", ".json", ".traj"):
        name = name.removesuffix(suffix)
    return name or "trajectory"


def repo_group(instance_id: str) -> str:
    """`django__django-11276` -> `django`; the repository prefix of a SWE-bench instance id."""
    if "__" in instance_id:
        return instance_id.split("__", 1)[0]
    return re.split(r"[-_.]", instance_id, maxsplit=1)[0] or instance_id


@dataclass
class BudgetedStep:
    index: int
    contexts: dict[Budget, tuple[WovenContext, float]]
    """Per budget: the context after step `index` and the seconds its weaving took."""
    add_seconds: float


def replay_budgets(
    trajectory: Trajectory, strategy: Strategy, budgets: Sequence[Budget], model_timer: Any = None
) -> Iterator[BudgetedStep]:
    """Feed steps one by one; after each, weave at every budget. Model time is excluded from seconds."""
    strategy.begin(trajectory.root)
    for index, step in enumerate(trajectory.steps, start=1):
        model_before = model_timer.seconds if model_timer is not None else 0.0
        start = time.perf_counter()
        strategy.add_step(step)
        added = time.perf_counter() - start
        if model_timer is not None:
            added -= model_timer.seconds - model_before
        contexts = {}
        for budget in budgets:
            start = time.perf_counter()
            context = strategy.context(max_tokens=budget)
            contexts[budget] = (context, time.perf_counter() - start)
        yield BudgetedStep(index, contexts, max(0.0, added))


def evaluate(
    trajectory: Trajectory,
    strategy_name: str,
    budgets: Sequence[Budget],
    *,
    seed: int = 0,
    overrides: Sequence[str] = (),
    model_config: ModelConfig | None = None,
) -> dict[str, Any]:
    """Every per-step number the report needs, for one (trajectory, strategy, seed), all budgets."""
    random.seed(seed)
    instance = trajectory_id(trajectory)
    evidence = next_step_evidence(trajectory)
    items = {e.index: e.items for e in evidence}
    said = {e.index: e.items for e in next_step_evidence(trajectory, history=True)}
    edits = {e.index: e.items for e in edit_evidence(trajectory, evidence)}
    sources = latest_sources(trajectory, evidence)
    history = history_evidence(trajectory)
    settings = cw_settings(overrides) if spec(strategy_name).baseline is None else {}
    built = build_strategy(strategy_name, settings, model_config=model_config, seed=seed)
    tokens = MessageTokens()
    previous: dict[Budget, list[Any]] = {}
    caches = {budget: PrefixCache() for budget in budgets}
    steps: dict[str, list[dict[str, Any]]] = {budget_key(b): [] for b in budgets}
    last = len(trajectory.steps)
    for replayed in replay_budgets(trajectory, built.strategy, budgets, built.model):
        if replayed.index >= last:  # no next step to need anything
            break
        needed = items.get(replayed.index + 1, frozenset())
        history_needed = said.get(replayed.index + 1, frozenset())
        edit_needed = edits.get(replayed.index + 1)
        for budget, (context, seconds) in replayed.contexts.items():
            text = context.text()
            record: dict[str, Any] = {
                "step": replayed.index,
                "tokens": context.tokens,
                "full_tokens": context.full_history_tokens,
                "items": len(needed),
                "covered": covered(needed, text),
                "history_items": len(history_needed),
                "history_covered": covered(history_needed, text),
                "kept": context.kept,
                "seconds": replayed.add_seconds + seconds,
            }
            distance: dict[str, list[int]] = {}
            for item, source in sources.get(replayed.index + 1, {}).items():
                counts = distance.setdefault(bucket(replayed.index - source), [0, 0])
                counts[0] += item in text
                counts[1] += 1
            record["by_distance"] = distance
            history_needed = history.get(replayed.index + 1, frozenset())
            record["history_items"] = len(history_needed)
            record["history_covered"] = covered(history_needed, text)
            if edit_needed is not None:
                record["edit_items"] = len(edit_needed)
                record["edit_covered"] = covered(edit_needed, text)
            if budget in previous:
                shared = common_prefix_tokens(previous[budget], context.messages, tokens)
                record["prefix_share"] = shared / context.tokens if context.tokens else 1.0
            previous[budget] = context.messages
            record.update(cache_record(caches[budget], context))
            steps[budget_key(budget)].append(record)
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
        "windows": window_record(trajectory, evidence),
    }


def cache_record(cache: PrefixCache, context: WovenContext) -> dict[str, Any]:
    """The provider-cache fields of a step's record: tokens served from cache and input billed."""
    use = cache.request(context.messages)
    record: dict[str, Any] = {"cached": use.cached["anthropic"], "compacted": context.compacted}
    record.update({f"billed_{provider}": round(billed, 1) for provider, billed in use.billed.items()})
    return record
