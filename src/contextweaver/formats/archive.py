"""Archives of recorded runs (`.tar.gz`, `.tgz`, `.tar`), read in place with `tarfile`.

Every member whose name looks like a run (`discovery.is_run_file`) is read with the detected reader;
members no reader claims (a `results.json` beside the runs) are skipped, but an archive that yields
no run at all is an error naming what was skipped.
"""

from __future__ import annotations

import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from contextweaver.formats.base import TrajectoryError
from contextweaver.formats.discovery import is_run_file
from contextweaver.formats.source import Source

if TYPE_CHECKING:
    from contextweaver.formats.base import Trajectory


ReadRuns = Callable[[Source, "str | None"], "list[Trajectory]"]
"""How one member is read: the formats' front door (`formats._read_runs`), handed in from above so that this
module, below the reader table, does not import it."""


def load_archive(path: str | Path, format: str | None, read_runs: ReadRuns) -> list[Trajectory]:
    """The runs of every run-like member, in member-name order; the source is `archive/member`."""
    runs: list[Trajectory] = []
    skipped: list[str] = []
    try:
        with tarfile.open(path) as archive:
            members = sorted(
                (m for m in archive.getmembers() if m.isfile() and is_run_file(m.name)),
                key=lambda m: m.name,
            )
            for member in members:
                handle = archive.extractfile(member)
                if handle is None:
                    continue
                text = handle.read().decode("utf-8", errors="replace").removeprefix("\ufeff")
                source = Source(Path(str(path)) / member.name, text)
                try:
                    runs += read_runs(source, format)
                except TrajectoryError:
                    skipped.append(member.name)
    except (OSError, tarfile.TarError) as exc:
        raise TrajectoryError(f"{path}: cannot read the archive: {exc}") from exc
    if not runs:
        raise TrajectoryError(
            f"{path}: no recorded run in the archive (skipped: {', '.join(skipped[:5]) or 'no .json/.traj/.jsonl member'})"
        )
    return runs
