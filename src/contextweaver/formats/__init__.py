"""Trajectory readers: one module per recorded-run format, found by name or by sniffing the file.

`load_trajectory(path)` tries each reader's cheap `detect` in `DETECT_ORDER` (most specific
first) and reads with the first that claims the file; `load_trajectory(path, format=...)` skips
detection. An unreadable file raises TrajectoryError naming the file, the place and what was
expected, so the user can tell a truncated file from a file of another format.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from contextweaver.formats.base import Trajectory, TrajectoryError
from contextweaver.formats.source import Source
from contextweaver.registry import Registry

__all__ = [
    "FORMATS",
    "DETECT_ORDER",
    "Reader",
    "Trajectory",
    "TrajectoryError",
    "detect_format",
    "load_trajectory",
]


class Reader(Protocol):
    """What a format module exposes as READER: a name, what it expects, a detector and a reader."""

    name: str
    expected: str
    """Completes "expected ...": e.g. "a mini-swe-agent .traj.json with 'messages'"."""

    def detect(self, source: Source) -> bool: ...

    def read(self, source: Source) -> Trajectory: ...


FORMATS = Registry(
    "trajectory format",
    {
        "mini-swe-agent": "contextweaver.formats.minisweagent:READER",
        "jsonl": "contextweaver.formats.jsonl:READER",
    },
)

DETECT_ORDER: tuple[str, ...] = ("mini-swe-agent", "jsonl")
"""Detection order: formats with a distinctive marker before looser shapes."""


def _readers() -> list[Reader]:
    names = [n for n in DETECT_ORDER if n in FORMATS.names()]
    names += [n for n in FORMATS.names() if n not in names]
    return [FORMATS.get(name) for name in names]


def _expected() -> str:
    expectations = [reader.expected for reader in _readers()]
    return "expected " + ", or ".join(expectations) + f" (formats: {', '.join(FORMATS.names())})"


def detect_format(path: str | Path) -> str:
    """The name of the format that claims the file; TrajectoryError when none does."""
    source = Source.read(path)
    return _detect(source).name


def _detect(source: Source) -> Reader:
    problem = source.json_error()
    if problem is not None:
        raise source.error(f"{problem}; {_expected()}")
    for reader in _readers():
        if reader.detect(source):
            return reader
    raise source.error(f"unrecognised trajectory ({_shape(source)}); {_expected()}")


def _shape(source: Source) -> str:
    """A few words on what the file holds, so the user sees why no reader claimed it."""
    document = source.document
    if isinstance(document, dict):
        return "a JSON object with keys " + ", ".join(repr(k) for k in list(document)[:8])
    if isinstance(document, list):
        return f"a JSON list of {len(document)} items"
    if document is None:
        return f"JSON Lines with {len(source.records or [])} records"
    return f"a JSON {type(document).__name__}"


def load_trajectory(path: str | Path, format: str | None = None) -> Trajectory:
    """Read a recorded run into root messages + Steps; `format` (a FORMATS name) skips detection."""
    source = Source.read(path)
    if format is None:
        reader = _detect(source)
    else:
        try:
            reader = FORMATS.get(format)
        except ValueError as exc:
            raise TrajectoryError(str(exc)) from None
        problem = source.json_error()
        if problem is not None:
            raise source.error(f"{problem}; expected {reader.expected}")
    trajectory = reader.read(source)
    trajectory.source = trajectory.source or str(source.path)
    trajectory.format = trajectory.format or reader.name
    return trajectory
