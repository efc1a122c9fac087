"""The fit: a deterministic coordinate search over each setting's declared grid (`config/select_weights.py`),
starting from the current settings, that maximises the smallest margin-minus-target over datasets
(`fit_score.Score.objective`; at an equal smallest, the mean over datasets) and rejects a setting that
loses recent evidence.

Runs are replayed in worker processes; each worker keeps its runs' settings-independent part
(`fit_score.Prepared`), so a candidate costs one replay of the selection per run. A `holdout` share of
the runs (by a hash of the run id) is never searched on: its objective before and after tells whether
the fit generalises.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from typing import Any

from contextweaver.config.select_weights import SelectSettings, grid
from contextweaver.eval.fit_score import Prepared, Score, dataset_score, prepare, run_point
from contextweaver.eval.frontier import RunPoint
from contextweaver.formats.base import Trajectory

MIN_GAIN = 0.001
"""A move must raise the objective by this much: smaller gains are noise a user's runs would not repeat."""

_RUNS: list[Trajectory] = []
_PREPARED: list[Prepared] = []
"""A worker's runs and their settings-independent part, set once when the scoring pool starts."""


@dataclass(frozen=True)
class Run:
    dataset: str
    id: str
    trajectory: Trajectory


def holdout_of(run_id: str, share: float) -> bool:
    """Whether a run is held out: a stable hash of its id, so the same runs are held out every time."""
    digest = hashlib.sha1(f"fit-holdout:{run_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") / 2**32 < share


def ids_hash(runs: Sequence[Run]) -> str:
    text = "\n".join(sorted(f"{r.dataset}/{r.id}" for r in runs))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _init(runs: list[Trajectory], prepared: list[Prepared]) -> None:
    global _RUNS, _PREPARED
    _RUNS, _PREPARED = runs, prepared


def _score(job: tuple[int, SelectSettings]) -> tuple[RunPoint, dict[str, list[float]]]:
    index, settings = job
    return run_point(_RUNS[index], _PREPARED[index], settings), _PREPARED[index].windows


class _Inline(Executor):
    """One process: what `-j 1` and the tests use."""

    def map(self, fn: Callable[..., Any], *iterables: Any, **_: Any) -> Iterator[Any]:
        return (fn(*args) for args in zip(*iterables, strict=True))


@dataclass
class Evaluator:
    """Scores settings on subsets of `runs` (indices), one pool for the whole fit."""

    runs: Sequence[Run]
    pool: Executor
    on_done: Callable[[], None] = lambda: None
    windows: dict[int, dict[str, list[float]]] = field(default_factory=dict)
    evaluations: int = 0

    def scores(self, candidates: Sequence[SelectSettings], subset: Sequence[int]) -> list[Score]:
        """Every candidate on `subset`, all replays in one batch (the pool stays busy across candidates)."""
        jobs = [(i, c) for c in candidates for i in subset]
        points: list[RunPoint] = []
        for i, (point, windows) in zip(
            [i for i, _ in jobs], self.pool.map(_score, jobs, chunksize=2), strict=True
        ):
            self.windows[i] = windows
            points.append(point)
            self.on_done()
        self.evaluations += len(candidates)
        n = len(subset)
        return [self._score(points[c * n : (c + 1) * n], subset) for c in range(len(candidates))]

    def _score(self, points: Sequence[RunPoint], subset: Sequence[int]) -> Score:
        names = sorted({self.runs[i].dataset for i in subset})
        return Score(
            tuple(
                dataset_score(
                    name,
                    [p for p, i in zip(points, subset, strict=True) if self.runs[i].dataset == name],
                    [self.windows[i] for i in subset if self.runs[i].dataset == name],
                )
                for name in names
            )
        )


@dataclass
class FitResult:
    start: SelectSettings
    settings: SelectSettings
    fit_before: Score
    fit_after: Score
    hold_before: Score | None
    hold_after: Score | None
    fit_runs: list[Run]
    hold_runs: list[Run]
    moves: list[str]
    trials: list[dict[str, Any]]
    """Every candidate tried: its round, setting, value and scores (what a user reads to see what matters)."""
    evaluations: int


@contextmanager
def _pool(runs: Sequence[Run], jobs: int, on_done: Callable[[], None]) -> Iterator[Executor]:
    """Each run is prepared once (in parallel), then every scoring worker starts with all of them."""
    trajectories = [r.trajectory for r in runs]
    if jobs <= 1:
        _init(trajectories, [_done(prepare(t), on_done) for t in trajectories])
        yield _Inline()
        return
    with ProcessPoolExecutor(jobs) as pool:
        prepared = [_done(p, on_done) for p in pool.map(prepare, trajectories, chunksize=2)]
    with ProcessPoolExecutor(jobs, initializer=_init, initargs=(trajectories, prepared)) as pool:
        yield pool


def _done(prepared: Prepared, on_done: Callable[[], None]) -> Prepared:
    on_done()
    return prepared


def fit(
    runs: Sequence[Run],
    start: SelectSettings,
    *,
    holdout: float = 0.0,
    rounds: int = 2,
    jobs: int = 1,
    knobs: Sequence[str] | None = None,
    on_phase: Callable[[str, int], None] = lambda label, total: None,
    on_done: Callable[[], None] = lambda: None,
) -> FitResult:
    """Coordinate search from `start`; `on_phase(label, replays)` and `on_done()` report progress."""
    held = [i for i, r in enumerate(runs) if holdout_of(r.id, holdout)]
    part = sorted(set(range(len(runs))) - set(held))
    if not part:
        raise ValueError(f"no runs left to fit on with --holdout {holdout}: lower it")
    names = [f.name for f in fields(SelectSettings) if grid(f.name) and (knobs is None or f.name in knobs)]
    on_phase("evidence of each run", len(runs))
    with _pool(runs, jobs, on_done) as pool:
        evaluator = Evaluator(runs, pool, on_done)
        on_phase("start", len(part))
        base = evaluator.scores([start], part)[0]
        search = Search(evaluator, part, base, start, base, on_phase)
        for round_ in range(1, rounds + 1):
            moved = [search.step(round_, name) for name in names]
            if not any(moved):
                break
        best, best_score = search.best, search.best_score
        hold_before = hold_after = None
        if held:
            on_phase("hold-out", 2 * len(held))
            hold_before, hold_after = evaluator.scores([start, best], held)
    return FitResult(
        start,
        best,
        base,
        best_score,
        hold_before,
        hold_after,
        [runs[i] for i in part],
        [runs[i] for i in held],
        search.moves,
        search.trials,
        evaluator.evaluations,
    )


@dataclass
class Search:
    """The coordinate search so far: the best settings and their score, the moves made and every trial."""

    evaluator: Evaluator
    part: list[int]
    base: Score
    best: SelectSettings
    best_score: Score
    on_phase: Callable[[str, int], None]
    moves: list[str] = field(default_factory=list)
    trials: list[dict[str, Any]] = field(default_factory=list)

    def step(self, round_: int, name: str) -> bool:
        """Try every other value of one knob; move to the best one that keeps the recent steps as `base`
        did and gains at least MIN_GAIN. Whether it moved."""
        best = self.best
        tried = [replace(best, **{name: v}) for v in grid(name) if v != getattr(best, name)]
        if not tried:
            return False
        self.on_phase(f"round {round_}: {name}", len(tried) * len(self.part))
        scored = list(zip(tried, self.evaluator.scores(tried, self.part), strict=True))
        self.trials += [trial(round_, name, c, s, s.keeps_recent(self.base)) for c, s in scored]
        ok = [(c, s) for c, s in scored if s.keeps_recent(self.base)]
        top = max(ok, key=lambda t: (t[1].objective, t[1].mean_gap), default=None)
        if top is None or not top[1].beats(self.best_score, MIN_GAIN):
            return False
        self.moves.append(
            f"round {round_}: {name} {getattr(best, name)} -> {getattr(top[0], name)}: objective "
            f"{self.best_score.objective:+.4f} -> {top[1].objective:+.4f}, mean over datasets "
            f"{self.best_score.mean_gap:+.4f} -> {top[1].mean_gap:+.4f}"
        )
        self.best, self.best_score = top
        return True


def trial(
    round_: int, name: str, candidate: SelectSettings, score: Score, keeps_recent: bool
) -> dict[str, Any]:
    return {
        "round": round_,
        "setting": name,
        "value": getattr(candidate, name),
        "objective": round(score.objective, 5),
        "mean_gap": round(score.mean_gap, 5),
        "keeps_recent": keeps_recent,
    }
