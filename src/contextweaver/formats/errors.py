"""The error a trajectory reader raises on input it cannot read (below the file reader, source.py, which
raises it too)."""

from __future__ import annotations

from contextweaver.errors import ContextWeaverError


class TrajectoryError(ContextWeaverError, ValueError):
    """A trajectory file that cannot be read: the message names the file, the place and the fix."""


class SeveralRuns(TrajectoryError):
    """A file or folder of several runs read where one is wanted; `choose` says how to pick one in
    Python, and the command line says it its own way (`--instance`)."""

    def __init__(self, path: object, ids: str, count: int) -> None:
        self.path, self.ids, self.count = path, ids, count
        super().__init__(self.choose("instance=<id or 0-based index>, or use load_trajectories()"))

    def choose(self, how: str) -> str:
        return f"{self.path}: holds {self.count} runs ({self.ids}); pick one with {how} or '{self.path}#<id>'"


class NotATrajectory(TrajectoryError):
    """A file no reader claims (a report, notes): passed over in a folder of runs, an error when named."""
