"""`contextweaver fit`: calibrate the per-step selection (`cw-select`) on recorded runs; write its weights.

contextweaver fit runs/ other-agent.tar.gz --holdout 0.25 -o weights.json
contextweaver replay run.traj.json -s cw-select -c select.weights=weights.json
"""

from __future__ import annotations

import json
import shlex
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from rich.console import Console

    from contextweaver.eval.fit import FitResult, Run
    from contextweaver.eval.fit_score import Score

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".traj.json", ".json", ".jsonl", ".traj")


def dataset_name(path: str) -> str:
    """`train/swe-agent__llama__150.tar.gz` -> `swe-agent__llama__150`: one RUNS argument, one dataset."""
    name = Path(path).resolve().name
    for suffix in ARCHIVE_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def dataset_names(inputs: tuple[str, ...]) -> list[str]:
    """Each input's dataset name, those that share one told apart by the shortest parent path that
    does (`a/trajs`, `b/trajs`): two folders both named `trajs` are two datasets, two rows."""
    names = [dataset_name(item) for item in inputs]
    parents = [Path(item).resolve().parent.parts for item in inputs]
    for name in set(names):
        group = [i for i, n in enumerate(names) if n == name]
        depth = 1
        while len(group) > 1 and len({names[i] for i in group}) < len(group):
            if depth > max(len(parents[i]) for i in group):  # the same input twice: number them
                for k, i in enumerate(group[1:], start=2):
                    names[i] = f"{names[i]}#{k}"
                break
            for i in group:
                names[i] = "/".join([*parents[i][len(parents[i]) - depth :], name]).lstrip("/")
            depth += 1
    return names


def load_runs(inputs: tuple[str, ...], split: str, limit: int) -> list[Run]:
    """Each input (file, directory or archive, read as `eval` reads it) is one dataset; its runs of
    `split`, the first `limit`."""
    from contextweaver.cli.runs import RunError, no_runs, warn
    from contextweaver.eval.fit import Run
    from contextweaver.eval.runner import discover
    from contextweaver.eval.splits import split_of
    from contextweaver.eval.trajectory_run import trajectory_id
    from contextweaver.formats import TrajectoryError

    runs: list[Run] = []
    for item, dataset in zip(inputs, dataset_names(inputs), strict=True):
        try:
            read = discover([item])
        except TrajectoryError:
            raise
        except ValueError as exc:  # run ids that occur twice
            raise click.UsageError(f"{item}: {exc}") from None
        warn(t for _, t in read)
        found = [Run(dataset, trajectory_id(t, p), t) for p, t in read]
        found = [r for r in found if split == "all" or split_of(r.id) == split]
        if not found:
            raise RunError(no_runs([item], split))
        runs += found[:limit] if limit else found
    return runs


@click.command("fit")
@click.argument("inputs", nargs=-1, required=True, type=click.Path(exists=True))
@click.option(
    "--out", "-o", "out", required=True, type=click.Path(dir_okay=False), help="Weights JSON to write."
)
@click.option(
    "--split",
    default="all",
    show_default=True,
    type=click.Choice(["train", "validation", "all"]),
    help="Only the runs of this fixed split (contextweaver.eval.splits).",
)
@click.option(
    "--holdout",
    default=0.25,
    show_default=True,
    type=click.FloatRange(0.0, 0.9),
    help="Share of runs never searched on; their margins before/after show whether the fit generalises.",
)
@click.option(
    "--rounds", default=2, show_default=True, type=click.IntRange(1, 5), help="Coordinate-search rounds."
)
@click.option("--limit", default=0, type=click.IntRange(0), help="Only the first N runs of each input.")
@click.option(
    "--start",
    "start",
    default=None,
    type=click.Path(exists=True, dir_okay=False),
    help="Weights file to start from (default: the shipped weights).",
)
@click.option(
    "--workers",
    "-j",
    "--jobs",
    default=1,
    show_default=True,
    type=click.IntRange(1),
    help="Worker processes.",
)
@click.option("--no-progress", is_flag=True, help="No progress bar (for logs).")
def command(
    inputs: tuple[str, ...],
    out: str,
    split: str,
    holdout: float,
    rounds: int,
    limit: int,
    start: str | None,
    workers: int,
    no_progress: bool,
) -> None:
    """Fit the per-step selection's settings to recorded runs (files, directories or .tar.gz archives;
    each argument is one dataset): maximise the smallest margin over the recency frontier, minus its
    target, across datasets, keeping recent evidence; write the weights for `-c select.weights=FILE`."""
    from rich.console import Console

    from contextweaver.config.select_weights import load_settings
    from contextweaver.eval.fit import fit

    console = Console(stderr=True, soft_wrap=True)
    from contextweaver.errors import ContextWeaverError

    try:
        runs = load_runs(inputs, split, limit)
        begin = load_settings(start)
    except ContextWeaverError as exc:  # an unreadable run or weights file: say which, no traceback
        raise click.UsageError(str(exc)) from None
    if not Path(out).absolute().parent.is_dir():  # found now, not after the fit
        raise click.BadParameter(
            f"the folder of {out} does not exist: create it or write the weights elsewhere", param_hint="-o"
        )
    console.print(f"{len(runs)} runs from {len(inputs)} dataset(s), holdout {holdout}, {workers} worker(s)")
    started = time.perf_counter()
    try:
        with _progress(console, no_progress) as (on_phase, on_done):
            result = fit(
                runs, begin, holdout=holdout, rounds=rounds, jobs=workers, on_phase=on_phase, on_done=on_done
            )
    except ValueError as exc:  # too few runs for the holdout, and the like: the message says what to change
        raise click.UsageError(f"{exc} ({len(runs)} run(s) read)") from None
    line = ["contextweaver fit", *map(shlex.quote, inputs), "--split", split, "--holdout", str(holdout)]
    line += ["--rounds", str(rounds)] + (["--limit", str(limit)] if limit else [])
    line += (["--start", shlex.quote(start)] if start else []) + ["-o", shlex.quote(out)]
    try:
        Path(out).write_text(json.dumps(document(result, " ".join(line)), indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise click.BadParameter(f"cannot write {out}: {exc.strerror or exc}", param_hint="-o") from None
    _table(result, Console(width=160))
    warning = holdout_warning(result.hold_before, result.hold_after)
    if warning:
        console.print(warning, style="bold yellow", highlight=False)
    console.print(
        f"{result.evaluations} settings evaluated in {time.perf_counter() - started:.0f}s; wrote {out} "
        f"(use it with -c select.weights={out})",
        highlight=False,
    )


def holdout_warning(before: Score | None, after: Score | None) -> str | None:
    """A warning when the fitted settings do worse than the start on the runs the search never saw: the
    objective (smallest margin minus target) or any dataset's margin fell. None when it held or rose."""
    if before is None or after is None:
        return None
    fell = [
        f"{a.name} {b.margin:+.4f} -> {a.margin:+.4f}"
        for b, a in zip(before.datasets, after.datasets, strict=True)
        if a.margin < b.margin - 1e-9
    ]
    if after.objective < before.objective - 1e-9:
        fell.insert(0, f"objective {before.objective:+.4f} -> {after.objective:+.4f}")
    if not fell:
        return None
    return (
        f"warning: on the held-out runs the fitted settings score below the start ({'; '.join(fell)}): the "
        "fit does not generalise there. Keep the start settings (the shipped ones unless --start), or fit "
        "on more runs"
    )


def document(result: FitResult, command_line: str) -> dict[str, Any]:
    """The weights file: its settings plus what they were fitted on and how they scored (no timings, so
    the same command writes the same file)."""
    from dataclasses import asdict

    from contextweaver.config.select_weights import weights_document
    from contextweaver.eval.fit import ids_hash

    def part(runs: list[Run]) -> dict[str, Any]:
        return {"runs": len(runs), "ids_sha256": ids_hash(runs)}

    scores: dict[str, Any] = {
        "fit": {"before": result.fit_before.as_dict(), "after": result.fit_after.as_dict()}
    }
    if result.hold_before is not None and result.hold_after is not None:
        scores["holdout"] = {"before": result.hold_before.as_dict(), "after": result.hold_after.as_dict()}
    return weights_document(
        result.settings,
        fitted_on=part(result.fit_runs),
        held_out=part(result.hold_runs),
        started_from=asdict(result.start),
        moves=result.moves,
        trials=result.trials,
        scores=scores,
        command=command_line,
    )


def _table(result: FitResult, console: Console) -> None:
    from rich.table import Table

    table = Table("part", "dataset", "runs", "margin before", "margin after", "target", "recent after")
    parts = [
        ("fit", result.fit_before, result.fit_after),
        ("hold-out", result.hold_before, result.hold_after),
    ]
    for label, before, after in parts:
        if before is None or after is None:
            continue
        for b, a in zip(before.datasets, after.datasets, strict=True):
            table.add_row(
                label,
                a.name,
                str(a.runs),
                f"{b.margin:+.4f}",
                f"{a.margin:+.4f}",
                f"{a.target:+.4f}",
                f"{a.recent:.4f}",
            )
        table.add_row(
            label,
            "objective (min margin - target)",
            "",
            f"{before.objective:+.4f}",
            f"{after.objective:+.4f}",
            "",
            "",
        )
    console.print(table)
    for move in result.moves or ["no move raised the objective: the start settings are kept"]:
        console.print(move, highlight=False)


class _progress:
    """A rich progress bar per phase of the fit (or nothing with --no-progress)."""

    def __init__(self, console: Console, off: bool) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        self.bar = None if off else Progress(*columns, console=console, transient=False)
        self.task: Any = None
        self.console, self.started = console, time.perf_counter()

    def __enter__(self) -> tuple[Any, Any]:
        if self.bar is not None:
            self.bar.__enter__()
        return self.phase, self.done

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)

    def phase(self, label: str, total: int) -> None:
        if self.bar is None:  # a log line per phase instead
            self.console.print(
                f"{time.perf_counter() - self.started:6.0f}s {label}: {total} replays", highlight=False
            )
        else:
            if self.task is not None:
                self.bar.remove_task(self.task)
            self.task = self.bar.add_task(label, total=total)

    def done(self) -> None:
        if self.bar is not None and self.task is not None:
            self.bar.advance(self.task)
