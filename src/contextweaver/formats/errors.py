"""The error a trajectory reader raises on input it cannot read (below the file reader, source.py, which
raises it too)."""

from __future__ import annotations

from contextweaver.errors import ContextWeaverError


class TrajectoryError(ContextWeaverError, ValueError):
    """A trajectory file that cannot be read: the message names the file, the place and the fix."""


class NotATrajectory(TrajectoryError):
    """A file no reader claims (a report, notes): passed over in a folder of runs, an error when named."""
