"""Metric arithmetic (docs/evaluation.md): pure functions over numbers and sets, shared by runner and report."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from itertools import combinations

from contextweaver.records import Message


def mean(values: Iterable[float]) -> float:
    data = list(values)
    return sum(data) / len(data) if data else math.nan


def percentile(values: Iterable[float], q: float) -> float:
    """Linear-interpolated percentile (numpy's default), q in [0, 100]."""
    data = sorted(values)
    if not data:
        return math.nan
    position = (len(data) - 1) * q / 100
    low = math.floor(position)
    high = min(low + 1, len(data) - 1)
    return data[low] + (data[high] - data[low]) * (position - low)


def std(values: Iterable[float]) -> float:
    """Sample standard deviation (0.0 for a single value: nothing varied)."""
    data = list(values)
    if len(data) < 2:
        return 0.0
    mu = mean(data)
    return math.sqrt(sum((x - mu) ** 2 for x in data) / (len(data) - 1))


def recall(pairs: Iterable[tuple[int, int]]) -> tuple[float, float]:
    """(pooled, mean) recall from per-trajectory (covered, total) pairs.

    Pooled: all covered items over all items. Mean: per-trajectory recall averaged over the
    trajectories that have at least one item (a trajectory with none says nothing either way).
    """
    data = list(pairs)
    covered = sum(c for c, _ in data)
    total = sum(t for _, t in data)
    pooled = covered / total if total else math.nan
    return pooled, mean(c / t for c, t in data if t)


def jaccard(a: Iterable[int], b: Iterable[int]) -> float:
    sa, sb = set(a), set(b)
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


def mean_pairwise_jaccard(kept_sets: Sequence[Iterable[int]]) -> float:
    """Agreement of the kept sets that runs with different seeds produced for one step (1.0 = identical)."""
    sets = [set(s) for s in kept_sets]
    if len(sets) < 2:
        return 1.0
    return mean(jaccard(a, b) for a, b in combinations(sets, 2))


def index_runs(indices: Iterable[int]) -> list[list[int]]:
    """Ascending step indices as [first, last] runs: [1, 2, 3, 7] -> [[1, 3], [7, 7]] (a kept set stays
    small however long the run: the full history is one run)."""
    runs: list[list[int]] = []
    for i in indices:
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return runs


def run_indices(runs: Iterable[Sequence[int]]) -> set[int]:
    """The inverse of `index_runs`."""
    return {i for first, last in runs for i in range(first, last + 1)}


def common_prefix_tokens(
    previous: Sequence[Message], current: Sequence[Message], tokens: Callable[[Message], int]
) -> int:
    """Tokens of the leading messages `current` shares verbatim with `previous` (what a prompt cache reuses).

    Counted at message granularity: a changed message ends the shared prefix.
    """
    shared = 0
    for before, now in zip(previous, current, strict=False):
        if before != now:
            break
        shared += tokens(now)
    return shared
