"""What the fit measures: `cw-select` with given settings on a set of runs, per dataset, against the
recency frontier (docs/evaluation.md), at the unbounded per-step selection the frontier report measures.

A run's evidence, its items' source steps and its window-N curve do not depend on the settings: each
worker computes them once per run (`Prepared`) and every later candidate only replays the selection.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from contextweaver.config.select_weights import SelectSettings
from contextweaver.eval.context_track import ContextTrack
from contextweaver.eval.evidence import next_step_evidence
from contextweaver.eval.frontier import (
    BUCKETS,
    RunPoint,
    bucket,
    headroom_target,
    latest_sources,
    margin,
    window_record,
)
from contextweaver.eval.frontier import run_point as point_of
from contextweaver.eval.replay import replay_steps
from contextweaver.formats.base import Trajectory
from contextweaver.selectors.select import SelectSelector
from contextweaver.strategies import weaver_config

RECENT_FLOOR = 0.995
"""Recent evidence (0-4 back) a fitted setting must keep on every dataset (or the start's, if lower)."""


@dataclass(frozen=True)
class Prepared:
    """One run's settings-independent part: the next steps' items, their latest sources, the window curve."""

    items: dict[int, frozenset[str]]
    sources: dict[int, dict[str, int]]
    windows: dict[str, list[float]]


def prepare(trajectory: Trajectory) -> Prepared:
    evidence = next_step_evidence(trajectory)
    return Prepared(
        {e.index: e.items for e in evidence},
        latest_sources(trajectory, evidence),
        window_record(trajectory, evidence),
    )


def run_point(trajectory: Trajectory, prepared: Prepared, settings: SelectSettings) -> RunPoint:
    """The run replayed through `cw-select` with `settings`: what `contextweaver eval` records, unbounded."""
    from contextweaver.weaver import ContextWeaver

    weaver = ContextWeaver(weaver_config("cw-select"))
    weaver.selector = SelectSelector(settings)
    asked = set().union(*prepared.items.values(), *prepared.sources.values())
    track = ContextTrack(asked)
    steps: list[dict[str, Any]] = []
    last = len(trajectory.steps)
    for replayed in replay_steps(trajectory, weaver):
        if replayed.index >= last:
            break
        context = replayed.context
        track.update(context.messages)
        needed = prepared.items.get(replayed.index + 1, frozenset())
        step_sources = prepared.sources.get(replayed.index + 1, {})
        present = track.found(frozenset(step_sources))
        distance: dict[str, list[int]] = {}
        for item, source in step_sources.items():
            counts = distance.setdefault(bucket(replayed.index - source), [0, 0])
            counts[0] += item in present
            counts[1] += 1
        steps.append(
            {
                "tokens": context.tokens,
                "items": len(needed),
                "covered": track.covered(needed),
                "by_distance": distance,
            }
        )
    return point_of(steps)


@dataclass(frozen=True)
class DatasetScore:
    """One dataset's pooled figures for one setting."""

    name: str
    runs: int
    recall: float
    tokens: float
    margin: float
    target: float
    recent: float

    @property
    def gap(self) -> float:
        """Margin minus its target: what the fit maximises (its minimum over datasets)."""
        return self.margin - self.target


def dataset_score(
    name: str, points: Sequence[RunPoint], windows: Sequence[Mapping[str, list[float]]]
) -> DatasetScore:
    items = sum(p.items for p in points)
    recent = [sum(p.buckets[BUCKETS[0]][i] for p in points) for i in (0, 1)]
    return DatasetScore(
        name,
        len(points),
        sum(p.covered for p in points) / items if items else 1.0,
        sum(p.tokens_mean for p in points) / len(points),
        margin(points, windows),
        headroom_target(points, windows),
        recent[0] / recent[1] if recent[1] else 1.0,
    )


@dataclass(frozen=True)
class Score:
    """A setting's figures on a set of runs, per dataset."""

    datasets: tuple[DatasetScore, ...]

    @property
    def objective(self) -> float:
        """The smallest margin-minus-target over datasets: no agent is traded for another."""
        return min(d.gap for d in self.datasets)

    @property
    def mean_gap(self) -> float:
        return sum(d.gap for d in self.datasets) / len(self.datasets)

    def beats(self, other: Score, gain: float) -> bool:
        """Raises the objective by `gain`, or keeps it and raises the mean over datasets by `gain` (one
        agent gains, none loses)."""
        if self.objective > other.objective + gain:
            return True
        return self.objective >= other.objective and self.mean_gap > other.mean_gap + gain

    def keeps_recent(self, start: Score) -> bool:
        """Recent evidence >= RECENT_FLOOR on every dataset (>= the start's where that is already lower)."""
        floor = {d.name: min(RECENT_FLOOR, d.recent) for d in start.datasets}
        return all(d.recent >= floor[d.name] - 1e-12 for d in self.datasets)

    def as_dict(self) -> dict[str, Any]:
        return {
            "objective": round(self.objective, 5),
            "mean_gap": round(self.mean_gap, 5),
            "datasets": {
                d.name: {
                    "runs": d.runs,
                    "recall": round(d.recall, 5),
                    "tokens": round(d.tokens, 1),
                    "margin": round(d.margin, 5),
                    "target": round(d.target, 5),
                    "recent": round(d.recent, 5),
                }
                for d in self.datasets
            },
        }
