"""The seams between components. Each strategy behind a seam lives in its own file and is registered by name."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from contextweaver.types import Message, Node, Parent, Step, WovenContext

if TYPE_CHECKING:
    from contextweaver.annotate import Annotation
    from contextweaver.config import WeaverConfig
    from contextweaver.formats.base import Trajectory
    from contextweaver.formats.source import Source
    from contextweaver.graph import DependencyGraph
    from contextweaver.selectors.plan import Plan
    from contextweaver.store.base import SessionInfo, StoredAnnotation, StoredStep
    from contextweaver.store.nodes import StoredNode


class Analyzer(Protocol):
    """Logical Dependency Analyzer: which earlier nodes does the new node rely on (top m)."""

    name: str

    def select_parents(
        self, node: Node, candidates: Sequence[Node], graph: DependencyGraph, task: str, m: int
    ) -> list[Parent]: ...


class Annotator(Protocol):
    """Parents and summaries of a new node: three calls (analyzer + summarizer) or one fused call."""

    def annotate(
        self, node: Node, candidates: Sequence[Node], graph: DependencyGraph, task: str, m: int
    ) -> Annotation: ...


class Selector(Protocol):
    """Which steps the next context keeps in full, by priority (a Plan for weaving)."""

    name: str

    def plan(self, graph: DependencyGraph, config: WeaverConfig) -> Plan: ...


class Reader(Protocol):
    """What a format module exposes as READER: a name, what it expects, a detector and a reader."""

    name: str
    expected: str
    """Completes "expected ...": e.g. "a mini-swe-agent .traj.json with 'messages'"."""

    def detect(self, source: Source) -> bool: ...

    def read(self, source: Source) -> Trajectory: ...


class Summarizer(Protocol):
    """Node summaries and incremental dependency summaries (never put into the agent's context)."""

    name: str

    def summarize(self, node: Node, task: str) -> str: ...

    def dependency_summary(self, node: Node, parents: Sequence[Node]) -> str: ...


@dataclass(frozen=True)
class Completion:
    """One model reply with the usage the provider reported (or the fake counted)."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str = ""


class Model(Protocol):
    """A chat model: the only component that talks to the network."""

    name: str

    def complete(
        self,
        messages: Sequence[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        json_schema: dict[str, Any] | None = None,
    ) -> Completion: ...


@runtime_checkable
class Strategy(Protocol):
    """A context manager: fed the root messages and each step, returns the context for the next call."""

    name: str

    def begin(self, messages: Sequence[Message]) -> None: ...

    def add_step(self, step: Step) -> Node: ...

    def context(self, max_tokens: int | None = None) -> WovenContext: ...

    @property
    def nodes(self) -> Sequence[Node]:
        """Every node so far, indexed by step (0 is the root)."""
        ...

    def stats(self) -> dict[str, Any]:
        """Counters of the strategy's own work (steps, memory calls, fallbacks)."""
        ...


class Store(Protocol):
    """The durable store behind sessions: SQLite (one file) or PostgreSQL (shared by many machines)."""

    url: str

    def create_session(
        self,
        session_id: str,
        root: Sequence[Message],
        config: dict[str, Any],
        *,
        conversation_key: str | None = None,
        meta: dict[str, Any] | None = None,
        owner: str | None = None,
    ) -> SessionInfo:
        """Create and commit a session; raises SessionExists when the id is taken."""
        ...

    def session(self, session_id: str) -> SessionInfo | None: ...

    def sessions(self, conversation_key: str | None = None) -> list[SessionInfo]:
        """All sessions (oldest first), or those started from one conversation key."""
        ...

    def step_count(self, session_id: str) -> int: ...

    def steps(self, session_id: str, start: int = 1, limit: int | None = None) -> list[StoredStep]:
        """Stored steps from index `start` on (at most `limit`), with their annotations when stored."""
        ...

    def digests(self, session_id: str) -> list[str]:
        """Digests of the stored steps in order (index 1 first)."""
        ...

    def append_step(self, session_id: str, index: int, step: Step, step_digest: str, fmt: str | None) -> None:
        """Commit step `index` (must be the next one, else StepConflict) before anything else happens."""
        ...

    def save_annotation(self, session_id: str, index: int, annotation: StoredAnnotation) -> None:
        """Commit the node's summaries, parents, status and the labels it gave, in one transaction."""
        ...

    def secret(self, name: str) -> str:
        """A random secret kept in the store, made on first use (e.g. the key of owner hashes)."""
        ...

    def append_node(
        self,
        session_id: str,
        index: int,
        step: Step,
        step_digest: str,
        fmt: str | None,
        annotation: StoredAnnotation,
        computed: StoredNode,
    ) -> None:
        """Commit step `index` with everything the memory made of it, in one transaction (else nothing)."""
        ...

    def save_cut(self, session_id: str, step: int, state: dict[str, Any]) -> None:
        """Keep the lazy context as a cut at step `step` left it (replacing the previous cut's)."""
        ...

    def cut(self, session_id: str) -> tuple[int, dict[str, Any]] | None:
        """The step and state of the session's last saved cut, if any."""
        ...

    def hold(self, key: str) -> AbstractContextManager[None]:
        """Keep other processes off `key` (a conversation) until released, where the database can."""
        ...

    def close(self) -> None: ...
