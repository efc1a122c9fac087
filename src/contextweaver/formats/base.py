"""What every trajectory reader returns, and the error it raises on input it cannot read (errors.py holds
the error, below the file reader that raises it too)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from contextweaver.formats.errors import NotATrajectory, SeveralRuns, TrajectoryError
from contextweaver.formats.source import Source
from contextweaver.records import Message, Step
from contextweaver.tokens import content_text

__all__ = ["NotATrajectory", "Reader", "SeveralRuns", "Trajectory", "TrajectoryError"]


@dataclass
class Trajectory:
    """A recorded run: the root messages (system + task, verbatim) and the agent's steps in order."""

    root: list[Message]
    steps: list[Step]
    source: str = ""
    format: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    """What the reader read past without failing (a mistyped key), each naming its line: for the user."""

    @property
    def task(self) -> str:
        """The first user message: the task Q."""
        for message in self.root:
            if message.get("role") == "user":
                return content_text(message.get("content"))
        return ""

    @property
    def system(self) -> str:
        return "\n".join(content_text(m.get("content")) for m in self.root if m.get("role") == "system")


class Reader(Protocol):
    """What a format module exposes as READER: a name, what it expects, a detector and a reader. A reader
    whose `reads_damaged_lines` is true is offered a JSON Lines file some lines of which do not parse
    (`Source.sound_records`), and says in a warning which lines it read past."""

    name: str
    expected: str
    """Completes "expected ...": e.g. "a mini-swe-agent .traj.json with 'messages'"."""
    keys: frozenset[str]
    """The keys its records carry: a file no reader takes is matched to the nearest format by them."""

    def detect(self, source: Source) -> bool: ...

    def read(self, source: Source) -> Trajectory: ...
