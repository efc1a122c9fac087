"""Run the grid (trajectories x strategies x seeds) in worker processes, resumably.

Each finished (trajectory, strategy, seed) is written at once to its own JSON file under
`<out>/results/`; a rerun loads the files that match (same trajectory content, settings and budgets)
and computes only the rest, so an interrupted run loses at most the units in flight.

A unit that fails (its file does not read, the strategy raises, the worker dies) becomes a failure
record (`failed(result)`) with the error, and the other units go on; failures are never stored, so a
rerun tries them again.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import signal
import threading
import traceback
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contextweaver.config import ModelConfig
from contextweaver.eval.trajectory_run import EvalBudget, budget_key, evaluate, file_id, trajectory_id
from contextweaver.formats import load_trajectories
from contextweaver.formats.base import NotATrajectory, Trajectory, TrajectoryError
from contextweaver.formats.conversation_dir import events_dir
from contextweaver.formats.discovery import is_single_run, run_paths
from contextweaver.nodes.extract import extraction_of
from contextweaver.strategies import needs_model, spec

SCHEMA = 2


@dataclass(frozen=True)
class Unit:
    """One cell of the grid: a trajectory file (and run), a strategy, a seed."""

    path: str
    instance: str
    strategy: str
    seed: int


@dataclass
class RunSettings:
    budgets: list[EvalBudget]
    overrides: list[str] = field(default_factory=list)
    model_config: ModelConfig | None = None

    def fingerprint(self, strategy: str) -> str:
        """What a stored result must have been computed with (budgets are checked separately)."""
        data: dict[str, Any] = {
            "schema": SCHEMA,
            "code": code_digest(),
            "overrides": self.overrides if spec(strategy).baseline is None else [],
            "model": self.model_config.model_dump() if self.model_config else None,
        }
        if needs_model(strategy):  # results from before the memory model received the seed are stale
            data["model_seeded"] = True
        return hashlib.sha1(json.dumps(data, sort_keys=True).encode()).hexdigest()[:12]


@functools.cache
def code_digest() -> str:
    """The package's own source, hashed: a result another version computed is stale (one tuned constant
    moves every figure), while a rerun of the same code still resumes from what it stored."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha1()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def discover(
    inputs: Sequence[str | Path], unreadable: dict[str, str] | None = None
) -> list[tuple[str, Trajectory]]:
    """Trajectories in the given files and folders (a folder walked for runs in the layouts agents
    write: formats/discovery.py). A file that holds several runs (a `.tar.gz` of runs, an OpenHands
    output.jsonl) gives every run in it.

    Files that are not trajectories (no reader recognizes them) are skipped in a folder and an error
    when named. A trajectory file that fails to read (broken JSON, a reader's error, no step at all) is
    put in `unreadable` (path -> error) when that is given, to be reported as failed runs; without it,
    it is skipped in a folder and raises when named.
    """
    found: list[tuple[str, Trajectory]] = []
    for item in inputs:
        path = Path(item)
        if not path.exists():
            raise FileNotFoundError(f"{path}: no such file or directory")
        named = is_single_run(path)
        for child in run_paths(path):
            try:
                found.extend((str(child), run) for run in load_trajectories(child))
            except NotATrajectory:
                if named:
                    raise
            except TrajectoryError as exc:
                if unreadable is not None:
                    unreadable[str(child)] = str(exc)
                elif named:
                    raise
    ids = [trajectory_id(t, p) for p, t in found]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"trajectory ids occur twice: {', '.join(duplicates)}; pass each run once")
    return found


def failure(unit: Unit, error: BaseException | str) -> dict[str, Any]:
    """The record of a unit that could not be evaluated: which one, and the error (with its traceback)."""
    message = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    detail = "" if isinstance(error, str) else "".join(traceback.format_exception(error))
    return {
        "trajectory": unit.instance,
        "source": unit.path,
        "strategy": unit.strategy,
        "seed": unit.seed,
        "error": message,
        "traceback": detail,
    }


def failed(result: Mapping[str, Any]) -> bool:
    return "error" in result


def content_hash(path: str) -> str:
    """Of a file's bytes; of a saved conversation's event files, names and bytes, in order."""
    digest = hashlib.sha1()
    folder = events_dir(path) if Path(path).is_dir() else None
    for file in sorted(folder.iterdir()) if folder is not None else [Path(path)]:
        digest.update(file.name.encode() if folder is not None else b"")
        with open(file, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


class ResultStore:
    """`<out>/results/<strategy>/seed<k>/<trajectory id>.json`, written atomically."""

    def __init__(self, out: str | Path) -> None:
        self.root = Path(out) / "results"

    def path(self, unit: Unit) -> Path:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in unit.instance)
        return self.root / unit.strategy / f"seed{unit.seed}" / f"{safe}.json"

    def load(
        self, unit: Unit, fingerprint: str, digest: str, budgets: Sequence[EvalBudget]
    ) -> dict[str, Any] | None:
        """The stored result when it was computed from the same file and settings, for every budget."""
        try:
            data: dict[str, Any] = json.loads(self.path(unit).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if data.get("fingerprint") != fingerprint or data.get("content_hash") != digest:
            return None
        if any(budget_key(b) not in data.get("budgets", {}) for b in budgets):
            return None
        return data

    def save(self, unit: Unit, data: dict[str, Any]) -> None:
        target = self.path(unit)
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_suffix(f".tmp{os.getpid()}")
        temporary.write_text(json.dumps(data, sort_keys=True), encoding="utf-8")
        os.replace(temporary, target)


def _work(
    unit: Unit, trajectory: Trajectory, settings: RunSettings, fingerprint: str, digest: str, out: str
) -> dict[str, Any]:
    try:
        data = evaluate(
            trajectory,
            unit.strategy,
            settings.budgets,
            seed=unit.seed,
            overrides=settings.overrides
            if spec(unit.strategy).baseline is None
            else (),  # as the fingerprint
            model_config=settings.model_config,
        )
    except Exception as exc:  # one unit's error is its own result, not the end of the grid
        return failure(unit, exc)
    data.update(fingerprint=fingerprint, content_hash=digest)
    ResultStore(out).save(unit, data)
    return data


def run_grid(
    trajectories: Sequence[tuple[str, Trajectory]],
    strategies: Sequence[str],
    seeds: Sequence[int],
    settings: RunSettings,
    out: str | Path,
    *,
    workers: int = 2,
    on_done: Callable[[Unit, bool], None] | None = None,
    unreadable: Mapping[str, str] | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """All results (stored ones reused; failures as `failure` records) in a deterministic order, and how
    many units were computed now. Each `unreadable` file (path -> error) fails once per strategy and seed.

    `on_done(unit, reused)` is called once per unit, for progress display. Ctrl-C (KeyboardInterrupt)
    stops the workers at once and propagates: finished units are stored, so a rerun resumes.
    """
    grid = _Grid(settings, str(out), {path: content_hash(path) for path, _ in trajectories})
    results, todo = grid.plan(trajectories, strategies, seeds, unreadable or {})
    for unit, data in results.items():
        if on_done:
            on_done(unit, not failed(data))
    _share_extraction(todo)
    with closing(grid.serial(todo) if workers <= 1 else grid.parallel(todo, workers)) as computed:
        for unit, data in computed:
            results[unit] = data
            if on_done:
                on_done(unit, False)
    order = {s: i for i, s in enumerate(strategies)}
    ordered = sorted(results.items(), key=lambda kv: (order[kv[0].strategy], kv[0].seed, kv[0].instance))
    return [data for _, data in ordered], len(todo)


def _share_extraction(todo: Sequence[tuple[Unit, Trajectory]]) -> None:
    """Extract each step once here, for trajectories that several units replay: the extraction is cached
    on the steps and travels with them to the workers, so no strategy extracts again."""
    units: dict[int, int] = {}
    for _, trajectory in todo:
        units[id(trajectory)] = units.get(id(trajectory), 0) + 1
    for trajectory in {id(t): t for _, t in todo if units[id(t)] > 1}.values():
        for step in trajectory.steps:
            extraction_of(step)


@dataclass
class _Grid:
    """What every unit of one run shares: the settings, the output directory, the files' hashes."""

    settings: RunSettings
    out: str
    digests: dict[str, str]

    def plan(
        self,
        trajectories: Sequence[tuple[str, Trajectory]],
        strategies: Sequence[str],
        seeds: Sequence[int],
        unreadable: Mapping[str, str],
    ) -> tuple[dict[Unit, dict[str, Any]], list[tuple[Unit, Trajectory]]]:
        """Stored results reused and unreadable files failed now; the rest to compute, longest first."""
        store = ResultStore(self.out)
        results: dict[Unit, dict[str, Any]] = {}
        todo: list[tuple[Unit, Trajectory]] = []
        for strategy in strategies:
            fingerprint = self.settings.fingerprint(strategy)
            for seed in seeds:
                for path, error in unreadable.items():
                    unit = Unit(path, file_id(path), strategy, seed)
                    results[unit] = failure(unit, error)
                for path, trajectory in trajectories:
                    unit = Unit(path, trajectory_id(trajectory, path), strategy, seed)
                    stored = store.load(unit, fingerprint, self.digests[path], self.settings.budgets)
                    if stored is not None:
                        results[unit] = stored
                    else:
                        todo.append((unit, trajectory))
        todo.sort(key=lambda u: -len(u[1].steps))  # longest first: better packing across workers
        return results, todo

    def _args(self, unit: Unit, trajectory: Trajectory) -> tuple[Any, ...]:
        fingerprint = self.settings.fingerprint(unit.strategy)
        return unit, trajectory, self.settings, fingerprint, self.digests[unit.path], self.out

    def serial(self, todo: Sequence[tuple[Unit, Trajectory]]) -> Generator[tuple[Unit, dict[str, Any]]]:
        for unit, trajectory in todo:
            yield unit, _work(*self._args(unit, trajectory))

    def parallel(
        self, todo: Sequence[tuple[Unit, Trajectory]], workers: int
    ) -> Generator[tuple[Unit, dict[str, Any]]]:
        if not todo:
            return
        pool = ProcessPoolExecutor(max_workers=workers)
        try:
            pending = {pool.submit(_work, *self._args(unit, t)): unit for unit, t in todo}
            while pending:
                with _interrupt_between_waits() as interrupted:
                    done, _ = wait(pending, timeout=WAKE_SECONDS, return_when=FIRST_COMPLETED)
                if interrupted:
                    raise KeyboardInterrupt
                for future in done:
                    unit = pending.pop(future)
                    try:
                        yield unit, future.result()
                    except Exception as exc:  # the worker died (or the unit could not reach it)
                        yield unit, failure(unit, exc)
        except BaseException:  # Ctrl-C, or the caller stopped: queued units are dropped, running ones killed
            _stop(pool)
            raise
        pool.shutdown()


WAKE_SECONDS = 0.2
"""How soon a Ctrl-C that came during a wait for the workers is acted on."""


@contextmanager
def _interrupt_between_waits() -> Iterator[list[bool]]:
    """Ctrl-C recorded, not raised, while waiting for the workers: a KeyboardInterrupt raised inside
    `concurrent.futures.wait` can leave a future's lock held, and the executor's exit hook then waits
    forever for its manager thread, blocked on that lock (a `kill -INT` of the parent hung 1 run in 6 on a
    busy machine). The caller raises it once the wait has returned. Outside the main thread, where no
    handler can be set, the default stays."""
    interrupted: list[bool] = []
    if threading.current_thread() is not threading.main_thread():
        yield interrupted
        return
    previous = signal.signal(signal.SIGINT, lambda *_: interrupted.append(True))
    try:
        yield interrupted
    finally:
        signal.signal(signal.SIGINT, previous)


def _stop(pool: ProcessPoolExecutor) -> None:
    """Cancel the units not started and end the workers now: the executor's own shutdown would wait
    for the running units, and without cancelling for the whole queue."""
    workers = list((getattr(pool, "_processes", None) or {}).values())  # no public terminate before 3.14
    pool.shutdown(wait=False, cancel_futures=True)
    for process in workers:
        process.terminate()
    for process in workers:
        process.join(timeout=5)
