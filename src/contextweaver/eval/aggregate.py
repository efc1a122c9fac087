"""From per-trajectory results to the report's rows: one per (strategy, budget), and per repository group.

Per-trajectory numbers are averaged over steps first, then over trajectories (docs/evaluation.md); recall
is reported pooled and as a mean of per-trajectory recalls. Main numbers come from the first seed;
the other seeds feed only the stability columns.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from contextweaver.eval.metrics import mean, mean_pairwise_jaccard, percentile, recall, run_indices, std

Result = dict[str, Any]


@dataclass
class Row:
    strategy: str
    budget: str
    trajectories: int
    tokens_mean: float
    tokens_p95: float
    ratio_to_full: float
    recall_pooled: float
    recall_mean: float
    edit_pooled: float
    edit_mean: float
    llm_calls_per_step: float
    memory_tokens_per_step: float
    seconds_per_step: float
    time_vs_sliding: float
    prefix_share: float
    seeds: int
    kept_jaccard: float
    recall_std: float
    failed: int = 0
    """Runs of this strategy (any seed) that failed: they are in no other column of the row."""
    input_vs_full: float = math.nan
    """Input tokens summed over every step, over the full history's: what a run sends."""
    cache_share: float = math.nan
    """Share of those tokens a provider's prompt cache serves (contextweaver.prompt_cache)."""
    billed_anthropic: float = math.nan
    """Input billed at Anthropic's cache prices, over the full history billed without a cache."""
    billed_openai: float = math.nan
    history_pooled: float = math.nan
    """History evidence (docs/evaluation.md): recall where an earlier thought or action counts as a source."""
    trail_pooled: float = math.nan
    """Artifact trail: of the files changed so far, the share a context that cut something names."""
    failing_pooled: float = math.nan
    """Failing-test recall: of the tests failing now, the share a context that cut something names."""
    fresh_pooled: float = math.nan
    """Edit freshness: of the texts the next edit replaces, the share a context that cut something holds."""
    cuts_marked: float = math.nan
    """Of the contexts that dropped steps whole, the share that says so."""
    reach_pooled: float = math.nan
    """Next-step evidence in the context or one recall away (a step the context names, `eval/recall_reach.py`)."""
    marker_tokens: float = math.nan
    """Mean tokens per context that cut, taken by the recall marks (handles and the note's recall line)."""
    recall_tokens: float = math.nan
    """Mean tokens of a step a recall would read (for evidence the context lacks)."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class GroupRow:
    strategy: str
    budget: str
    group: str
    trajectories: int
    tokens_mean: float
    recall_pooled: float
    recall_mean: float


def _steps(result: Result, budget: str) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = result["budgets"].get(budget, [])
    return steps


def _trajectory_recall(
    steps: list[dict[str, Any]], covered: str = "covered", items: str = "items"
) -> tuple[int, int]:
    return sum(s.get(covered, 0) for s in steps), sum(s.get(items, 0) for s in steps)


def _first_seed(results: Sequence[Result]) -> dict[str, list[Result]]:
    seeds: dict[str, int] = {}
    for r in results:
        seeds[r["strategy"]] = min(seeds.get(r["strategy"], r["seed"]), r["seed"])
    by_strategy: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        if r["seed"] == seeds[r["strategy"]]:
            by_strategy[r["strategy"]].append(r)
    return by_strategy


def budgets_of(results: Sequence[Result]) -> list[str]:
    keys: dict[str, None] = {}
    for r in results:
        keys.update(dict.fromkeys(r["budgets"]))
    return sorted(keys, key=lambda k: (k == "none", k == "half", int(k) if k.isdigit() else 0))


def _stability(results: Sequence[Result], budget: str) -> tuple[int, float, float]:
    """(seeds, mean pairwise Jaccard of kept sets per step, std over seeds of pooled recall)."""
    by_seed: dict[int, dict[str, list[dict[str, Any]]]] = defaultdict(dict)
    for r in results:
        by_seed[r["seed"]][r["trajectory"]] = _steps(r, budget)
    if len(by_seed) < 2:
        return len(by_seed), math.nan, math.nan
    seeds = sorted(by_seed)
    common = set.intersection(*(set(by_seed[s]) for s in seeds))
    agreements = []
    for trajectory in sorted(common):
        runs = [by_seed[s][trajectory] for s in seeds]
        for aligned in zip(*runs, strict=False):
            agreements.append(mean_pairwise_jaccard([run_indices(step["kept"]) for step in aligned]))
    recalls = [recall(_trajectory_recall(by_seed[s][t]) for t in sorted(common))[0] for s in seeds]
    return len(seeds), mean(agreements), std(recalls)


def rows(results: Sequence[Result]) -> list[Row]:
    """One row per (strategy, budget), strategies in the order they first appear."""
    first = _first_seed(results)
    all_by_strategy: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        all_by_strategy[r["strategy"]].append(r)
    out: list[Row] = []
    for budget in budgets_of(results):
        sliding = first.get("sliding_window")
        sliding_seconds = _seconds_per_step(sliding, budget) if sliding else math.nan
        for strategy, runs in first.items():
            row = _row(strategy, budget, runs, all_by_strategy[strategy], sliding_seconds)
            if row is not None:
                out.append(row)
    return out


def _row(
    strategy: str, budget: str, runs: Sequence[Result], every_seed: Sequence[Result], sliding_seconds: float
) -> Row | None:
    """The row of one strategy at one budget (its runs of the first seed; `every_seed` for stability),
    None when no run has a step at that budget."""
    per_traj = [_steps(r, budget) for r in runs]
    all_steps = [s for steps in per_traj for s in steps]
    if not all_steps:
        return None
    pooled, per_mean = recall(_trajectory_recall(steps) for steps in per_traj)
    edit_pooled, edit_mean = recall(_trajectory_recall(s, "edit_covered", "edit_items") for s in per_traj)
    seeds, agreement, recall_sd = _stability(every_seed, budget)
    calls, memory_tokens, seconds, vs_sliding = _costs(runs, budget, sliding_seconds)
    row = Row(
        strategy=strategy,
        budget=budget,
        trajectories=sum(1 for steps in per_traj if steps),
        tokens_mean=mean(mean(s["tokens"] for s in steps) for steps in per_traj if steps),
        tokens_p95=percentile((s["tokens"] for s in all_steps), 95),
        ratio_to_full=mean(
            mean(s["tokens"] / s["full_tokens"] for s in steps) for steps in per_traj if steps
        ),
        recall_pooled=pooled,
        recall_mean=per_mean,
        edit_pooled=edit_pooled,
        edit_mean=edit_mean,
        llm_calls_per_step=calls,
        memory_tokens_per_step=memory_tokens,
        seconds_per_step=seconds,
        time_vs_sliding=vs_sliding,
        prefix_share=mean(s["prefix_share"] for s in all_steps if "prefix_share" in s),
        seeds=seeds,
        kept_jaccard=agreement,
        recall_std=recall_sd,
        history_pooled=_pooled(per_traj, "history"),
        trail_pooled=_pooled(per_traj, "trail"),
        failing_pooled=_pooled(per_traj, "failing"),
        fresh_pooled=_pooled(per_traj, "fresh"),
        cuts_marked=_marked(all_steps),
        reach_pooled=_pooled(per_traj, "reach"),
        marker_tokens=_per(all_steps, "marker_tokens"),
        recall_tokens=_per(all_steps, "recall_tokens", "recalls"),
    )
    vars(row).update(cache_columns(all_steps))
    return row


def _costs(runs: Sequence[Result], budget: str, sliding_seconds: float) -> tuple[float, float, float, float]:
    """What a strategy's runs cost per step: memory-model calls and tokens, seconds, and seconds against
    the sliding window's."""
    total_steps = sum(r["steps_total"] for r in runs)
    seconds = _seconds_per_step(runs, budget)
    return (
        sum(r["llm"]["calls"] for r in runs) / total_steps,
        sum(r["llm"]["prompt_tokens"] + r["llm"]["completion_tokens"] for r in runs) / total_steps,
        seconds,
        seconds / sliding_seconds if sliding_seconds else math.nan,
    )


def _pooled(per_traj: Sequence[list[dict[str, Any]]], name: str) -> float:
    """Pooled recall of the `NAME_covered` / `NAME_items` fields of every step."""
    return recall(_trajectory_recall(s, f"{name}_covered", f"{name}_items") for s in per_traj)[0]


def _per(steps: Sequence[dict[str, Any]], name: str, count: str = "") -> float:
    """Mean of a step field over the steps that have it (per unit of `count` when given)."""
    having = [s for s in steps if name in s]
    units = sum(s[count] for s in having) if count else len(having)
    return sum(s[name] for s in having) / units if units else math.nan


def _marked(steps: Sequence[dict[str, Any]]) -> float:
    dropped = [s for s in steps if s.get("cuts") and "unmarked" in s]
    return 1 - sum(s["unmarked"] for s in dropped) / len(dropped) if dropped else math.nan


def cache_columns(steps: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Pooled over every step: input over the full history's, cached share, billed input per provider."""
    priced = [s for s in steps if "cached" in s]
    full = sum(s["full_tokens"] for s in priced)
    tokens = sum(s["tokens"] for s in priced)
    if not full or not tokens:
        return {}
    return {
        "input_vs_full": tokens / full,
        "cache_share": sum(s["cached"] for s in priced) / tokens,
        "billed_anthropic": sum(s["billed_anthropic"] for s in priced) / full,
        "billed_openai": sum(s["billed_openai"] for s in priced) / full,
    }


def _seconds_per_step(runs: Sequence[Result], budget: str) -> float:
    return mean(s["seconds"] for r in runs for s in _steps(r, budget))


def group_rows(results: Sequence[Result]) -> list[GroupRow]:
    """Recall and tokens per repository group (first seed), for every strategy and budget."""
    out: list[GroupRow] = []
    for budget in budgets_of(results):
        for strategy, runs in _first_seed(results).items():
            groups: dict[str, list[list[dict[str, Any]]]] = defaultdict(list)
            for r in runs:
                if _steps(r, budget):
                    groups[r["group"]].append(_steps(r, budget))
            for group in sorted(groups):
                per_traj = groups[group]
                pooled, per_mean = recall(_trajectory_recall(steps) for steps in per_traj)
                tokens = mean(mean(s["tokens"] for s in steps) for steps in per_traj)
                out.append(GroupRow(strategy, budget, group, len(per_traj), tokens, pooled, per_mean))
    return out


def run_lengths(results: Sequence[Result], budget: str) -> list[tuple[str, int]]:
    """(trajectory, steps) of the runs `tokens_by_step` averages, longest first."""
    steps: dict[str, int] = {}
    for runs in _first_seed(results).values():
        for r in runs:
            steps[r["trajectory"]] = max(
                [steps.get(r["trajectory"], 0), *(s["step"] for s in _steps(r, budget))]
            )
    return sorted(steps.items(), key=lambda item: (-item[1], item[0]))


def tokens_by_step(results: Sequence[Result], budget: str) -> dict[str, list[tuple[int, float]]]:
    """Mean context tokens at each step index over the trajectories that reach it (first seed)."""
    out: dict[str, list[tuple[int, float]]] = {}
    for strategy, runs in _first_seed(results).items():
        at: dict[int, list[int]] = defaultdict(list)
        for r in runs:
            for s in _steps(r, budget):
                at[s["step"]].append(s["tokens"])
        out[strategy] = [(k, mean(v)) for k, v in sorted(at.items())]
    return out
