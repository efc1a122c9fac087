"""The recency frontier (docs/evaluation.md): window-N for N = 2..20 as (mean tokens, pooled recall) points,
each strategy's margin over it at its own mean tokens with a bootstrap 95% interval over runs, and
recall split by how far back the item's latest source output lies.

Per run, `window_record` computes every window-N point from the step token counts and the items'
source steps (a window keeps steps k-N+1..k whole and the rest as placeholders, exactly what the
sliding-window baseline weaves), so the frontier costs one pass per run, not 19 replays.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from contextweaver.eval.evidence import EarlierText, StepEvidence
from contextweaver.eval.intervals import Interval, bootstrap
from contextweaver.formats.base import Trajectory
from contextweaver.nodes.extract import make_node, root_node

WINDOWS = tuple(range(2, 21))
BUCKETS = ("0-4", "5-9", "10+")


def bucket(distance: int) -> str:
    """0-4: any 5-window keeps it; 5-9; 10+: no window of 10 keeps it."""
    return BUCKETS[0] if distance < 5 else BUCKETS[1] if distance < 10 else BUCKETS[2]


def latest_sources(trajectory: Trajectory, evidence: Sequence[StepEvidence]) -> dict[int, dict[str, int]]:
    """Next step index -> item -> the latest earlier step (1-based) whose output holds the item."""
    return latest_of(all_sources(trajectory, evidence))


def latest_of(every: dict[int, dict[str, list[int]]]) -> dict[int, dict[str, int]]:
    """`all_sources` cut to the latest source of each item."""
    return {
        index: {item: found[-1] for item, found in items.items() if found} for index, items in every.items()
    }


def all_sources(trajectory: Trajectory, evidence: Sequence[StepEvidence]) -> dict[int, dict[str, list[int]]]:
    """Next step index -> item -> every earlier step (1-based) whose output holds the item."""
    earlier = EarlierText(trajectory, set().union(*(e.items for e in evidence)))
    return {
        e.index: {item: [j + 1 for j in earlier.sources(item, e.index - 1)] for item in e.items}
        for e in evidence
    }


def window_record(trajectory: Trajectory, evidence: Sequence[StepEvidence]) -> dict[str, list[float]]:
    """Per N: [sum of context tokens over steps, steps, covered items, items], one replay's worth."""
    root = root_node(trajectory.root).full_tokens
    nodes = [make_node(i, step) for i, step in enumerate(trajectory.steps, start=1)]
    full = [0] + [n.full_tokens for n in nodes]
    compressed = [0] + [n.compressed_tokens for n in nodes]
    sources = all_sources(trajectory, evidence)
    record: dict[str, list[float]] = {}
    last = len(trajectory.steps)
    prefix_full = [0] * (last + 1)
    prefix_compressed = [0] * (last + 1)
    for j in range(1, last + 1):
        prefix_full[j] = prefix_full[j - 1] + full[j]
        prefix_compressed[j] = prefix_compressed[j - 1] + compressed[j]
    for n in WINDOWS:
        tokens = covered = items = steps = 0
        for k in range(1, last):
            lo = max(1, k - n + 1)
            tokens += root + prefix_compressed[lo - 1] + prefix_full[k] - prefix_full[lo - 1]
            steps += 1
            for found in sources.get(k + 1, {}).values():
                items += 1
                covered += any(lo <= j <= k for j in found)
        record[str(n)] = [tokens, steps, covered, items]
    return record


@dataclass(frozen=True)
class RunPoint:
    """One run's numbers for one strategy (unbounded): what the pooled figures are built from."""

    tokens_mean: float
    covered: int
    items: int
    buckets: dict[str, tuple[int, int]]


def run_point(steps: Sequence[Mapping[str, Any]]) -> RunPoint:
    buckets = {b: [0, 0] for b in BUCKETS}
    for step in steps:
        for name, (covered, total) in (step.get("by_distance") or {}).items():
            buckets[name][0] += covered
            buckets[name][1] += total
    tokens = sum(s["tokens"] for s in steps) / len(steps) if steps else 0.0
    return RunPoint(
        tokens,
        sum(s["covered"] for s in steps),
        sum(s["items"] for s in steps),
        {b: (c, t) for b, (c, t) in buckets.items()},
    )


def frontier_points(windows: Sequence[Mapping[str, list[float]]]) -> list[tuple[int, float, float]]:
    """(N, mean tokens over runs of the per-run step mean, pooled recall) for each window N."""
    out = []
    for n in WINDOWS:
        rows = [w[str(n)] for w in windows if str(n) in w and w[str(n)][1]]
        if not rows:
            continue
        tokens = sum(r[0] / r[1] for r in rows) / len(rows)
        items = sum(r[3] for r in rows)
        out.append((n, tokens, sum(r[2] for r in rows) / items if items else 1.0))
    return out


def interpolate(points: Sequence[tuple[int, float, float]], tokens: float) -> float:
    """The frontier's recall at `tokens` (linear between points; clamped at both ends)."""
    ordered = sorted((t, r) for _, t, r in points)
    if tokens <= ordered[0][0]:
        return ordered[0][1]
    for (t0, r0), (t1, r1) in zip(ordered, ordered[1:], strict=False):
        if t0 <= tokens <= t1:
            return r0 + (r1 - r0) * (tokens - t0) / (t1 - t0) if t1 > t0 else max(r0, r1)
    return ordered[-1][1]


def margin(points: Sequence[RunPoint], windows: Sequence[Mapping[str, list[float]]]) -> float:
    tokens = sum(p.tokens_mean for p in points) / len(points)
    items = sum(p.items for p in points)
    recall = sum(p.covered for p in points) / items if items else 1.0
    return recall - interpolate(frontier_points(windows), tokens)


def bootstrap_margin(
    points: Sequence[RunPoint],
    windows: Sequence[Mapping[str, list[float]]],
    rounds: int = 1000,
    seed: int = 0,
) -> Interval:
    """(margin, low, high): the 95% interval resamples runs (the same runs for strategy and frontier)."""

    def on(pick: Sequence[int]) -> float:
        return margin([points[i] for i in pick], [windows[i] for i in pick])

    return bootstrap(len(points), on, rounds, seed)


def headroom_target(points: Sequence[RunPoint], windows: Sequence[Mapping[str, list[float]]]) -> float:
    """min(0.05, (1 - frontier recall at the strategy's tokens) / 2): the margin worth asking for."""
    tokens = sum(p.tokens_mean for p in points) / len(points)
    return min(0.05, (1 - interpolate(frontier_points(windows), tokens)) / 2)
