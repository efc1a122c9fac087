"""Bootstrap 95% intervals over runs: a figure pooled over runs is recomputed on runs drawn with
replacement, so a difference the spread between runs explains is not read as a gain or a loss (on the
SWE-agent-LM-32B runs at 8k, single runs move history evidence by 0.1 either way against masking)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

Interval = tuple[float, float, float]
"""(value on every run, low, high)."""


def bootstrap(
    runs: int, statistic: Callable[[Sequence[int]], float], rounds: int = 1000, seed: int = 0
) -> Interval:
    """`statistic` of the run indices 0..runs-1, and its 2.5 and 97.5 percentiles over `rounds` resamples."""
    value = statistic(range(runs))
    if not runs:  # nothing to resample
        return value, value, value
    rng = random.Random(seed)
    samples = sorted(statistic([rng.randrange(runs) for _ in range(runs)]) for _ in range(rounds))
    return value, samples[int(0.025 * rounds)], samples[min(rounds - 1, int(0.975 * rounds))]


def pooled_difference(
    ours: Sequence[tuple[int, int]], theirs: Sequence[tuple[int, int]], rounds: int = 1000
) -> Interval:
    """Pooled hits / items of ours minus theirs, per run (the same runs in the same order, resampled together)."""
    if len(ours) != len(theirs):
        raise ValueError(f"paired runs differ in number: {len(ours)} against {len(theirs)}")

    def difference(pick: Sequence[int]) -> float:
        return _pooled(ours, pick) - _pooled(theirs, pick)

    return bootstrap(len(ours), difference, rounds)


def _pooled(runs: Sequence[tuple[int, int]], pick: Sequence[int]) -> float:
    items = sum(runs[i][1] for i in pick)
    return sum(runs[i][0] for i in pick) / items if items else 0.0
