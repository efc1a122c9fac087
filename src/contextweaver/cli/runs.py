"""The runs a command is given, read in one place: what the user sees when an input gives no run.

An input that gives nothing to replay (a file no reader takes, one read as no step, a folder with no
run in it) is a usage error, exit 2, whose message names the file, the format it was taken for and
what to do; what a reader read past (a mistyped key) is said on stderr, once per file.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import click

from contextweaver.cli.options import require_task
from contextweaver.formats import FORMATS, SeveralRuns, Trajectory, TrajectoryError, load_trajectory
from contextweaver.formats.discovery import LAYOUTS


class RunError(click.ClickException):
    """An input that gives no run: a bad argument, so exit 2 (click's usage errors), without the usage."""

    exit_code = 2


def read_run(path: str | Path, input_format: str | None = None, instance: str | None = None) -> Trajectory:
    """The one run in `path` (a file, a conversation folder, or a folder of one run), with its task."""
    try:
        trajectory = load_trajectory(path, format=input_format, instance=instance)
    except SeveralRuns as exc:
        raise RunError(exc.choose("--instance <id or 0-based index>")) from None
    except TrajectoryError as exc:
        raise RunError(str(exc)) from None
    warn([trajectory])
    require_task(path, trajectory, input_format)
    return trajectory


def warn(trajectories: Iterable[Trajectory]) -> None:
    """Each run's reader warnings on stderr, naming its file."""
    for trajectory in trajectories:
        for warning in trajectory.warnings:
            click.echo(f"warning: {trajectory.source}: {warning}", err=True)


def empty_inputs(inputs: Sequence[str | Path], read: Iterable[str | Path]) -> list[str]:
    """The inputs under which none of the `read` paths (runs, or files that failed to read) lies: a
    folder with no run in it, which a command given several inputs would otherwise drop unsaid."""
    found = [Path(p).absolute() for p in read]
    return [
        str(item)
        for item in inputs
        if not any(p == Path(item).absolute() or Path(item).absolute() in p.parents for p in found)
    ]


def no_runs(inputs: Sequence[str | Path], split: str = "all") -> str:
    """The message of inputs that gave no run (of `split`): where runs are looked for, and the formats."""
    of = "" if split == "all" else f" of split {split!r}"
    return (
        f"no recorded run{of} in {', '.join(map(str, inputs))}; runs are found in these layouts: {LAYOUTS}; "
        f"formats read: {', '.join(FORMATS.names())}"
    )
