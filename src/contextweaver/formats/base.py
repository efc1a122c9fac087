"""What every trajectory reader returns, and the error it raises on input it cannot read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from contextweaver.errors import ContextWeaverError
from contextweaver.records import Message, Step
from contextweaver.tokens import content_text

if TYPE_CHECKING:
    from contextweaver.formats.source import Source


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
