"""What a durable store holds and promises, independent of the database behind it.

A store keeps many sessions. Each session is the root messages (system + task, verbatim), the
weaver config it was started with, its steps in order (raw, verbatim), and per step the memory's
annotation: summary, dependency summary, parents with confidence and reason, the validation
status the step got, and the labels (supersessions) it gave to earlier nodes. Steps and
annotations are append-only rows; a write returns only after its transaction is committed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from contextweaver.errors import ContextWeaverError
from contextweaver.nodes.graph import LabelRecord
from contextweaver.records import Message, Node, Step
from contextweaver.store.encoding import canonical, ordered
from contextweaver.store.nodes import StoredAnnotation, StoredNode
from contextweaver.store.requests import RowWrite


class StoreError(ContextWeaverError, RuntimeError):
    """The store cannot do what was asked; the message says why and how to fix it."""


class SessionNotFound(StoreError, KeyError):
    """No session with that id in the store."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else "session not found"


class SessionExists(StoreError):
    """A session with that id is already in the store (another writer may have created it)."""


class StepConflict(StoreError):
    """A step index that is already stored, or not the next one: another writer got there first."""


def digest(messages: Sequence[Message]) -> str:
    """Fingerprint of a run of chat messages: how a resent history is matched to stored steps."""
    return hashlib.sha256(canonical(list(messages)).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class SessionInfo:
    """One session's header row."""

    id: str
    root: list[Message]
    root_digest: str
    config: dict[str, Any]
    created_at: float
    updated_at: float
    steps: int = 0
    conversation_key: str | None = None
    format: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    owner: str | None = None
    """Keyed hash of the credential that created the session (None: created without one)."""


@dataclass(frozen=True)
class StoredStep:
    """A step as stored: its index (1-based; 0 is the root), the raw step, its digest and annotation."""

    index: int
    step: Step
    digest: str
    annotation: StoredAnnotation | None = None
    computed: StoredNode | None = None
    """What extraction computed (None for rows stored before it was kept): reopening reads it."""


def step_row(step: Step) -> dict[str, Any]:
    """The columns a step is stored in (messages and meta as JSON text)."""
    return {
        "thought": step.thought,
        "action": step.action,
        "observation": step.observation,
        "messages": ordered(list(step.messages)),
        "images": step.images,
        "kind": step.kind,
        "meta": canonical(step.meta),
    }


def step_from_row(row: dict[str, Any]) -> Step:
    return Step(
        thought=row["thought"],
        action=row["action"],
        observation=row["observation"],
        messages=tuple(json.loads(row["messages"])),
        images=int(row["images"]),
        kind=row["kind"],
        meta=json.loads(row["meta"]),
    )


def annotation_of(node: Node, labels: Sequence[LabelRecord]) -> StoredAnnotation:
    """What to store for a freshly added node and the labels its step gave to earlier nodes."""
    return StoredAnnotation(
        summary=node.summary,
        dependency_summary=node.dependency_summary,
        parents=node.parents,
        validation_status=str(node.validation_status),
        labels=tuple(labels),
    )


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
        capability: str | None = None,
    ) -> SessionInfo:
        """Create and commit a session; raises SessionExists when the id is taken. `capability`: the
        session's recall capability (serve/sessions/recall.py), found again by `session_with_capability`."""
        ...

    def session(self, session_id: str) -> SessionInfo | None: ...

    def sessions(self, conversation_key: str | None = None) -> list[SessionInfo]:
        """All sessions (oldest first), or those started from one conversation key."""
        ...

    def sessions_of(
        self, owner: str | None, offset: int = 0, limit: int | None = None
    ) -> tuple[list[SessionInfo], int]:
        """A page of one owner's sessions (oldest first; None: those created without a credential) and how
        many it has, by the owner index: a caller's listing never reads other callers' sessions."""
        ...

    def session_with_capability(self, capability: str) -> SessionInfo | None:
        """The session whose recall capability is `capability`, by the capability index."""
        ...

    def fill_capabilities(self, capability_of: Callable[[str], str], batch: int = 1000) -> int:
        """Store `capability_of(id)` for the sessions stored without one (created before migration 7, or
        without a proxy), each once; returns how many. A proxy calls it once, at start."""
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

    def record_request(self, session_id: str, row: dict[str, Any]) -> int:
        """Commit one forwarded request's row (columns: store/requests.py); its id."""
        ...

    def write_requests(self, writes: Sequence[RowWrite]) -> list[int]:
        """Commit the usage ledger's writes (new rows and answers, in sessions or outside them: RowWrite) in
        one transaction, else none of them; each write's row id."""
        ...

    def requests(self, session_id: str, after: int = 0, limit: int | None = None) -> list[dict[str, Any]]:
        """The session's request rows with `id` above `after`, oldest first."""
        ...

    def request_totals(self, session_id: str | None = None) -> dict[str, dict[str, Any]]:
        """Per session id (every one, or the one given): its request count and sums (requests.py: TOTALS)."""
        ...

    def owner_request_totals(self, owner: str | None) -> dict[str, dict[str, Any]]:
        """`request_totals` of one owner's sessions (those with requests), by the owner index."""
        ...

    def passed_requests(
        self, owner: str | None, after: int = 0, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """One owner's rows outside sessions with `id` above `after`, oldest first, by the owner index."""
        ...

    def passed_totals(self) -> dict[str | None, dict[str, Any]]:
        """Per owner: the count and sums of its requests outside sessions (requests.py: PASSED_TOTALS)."""
        ...

    def owner_passed_totals(self, owner: str | None) -> dict[str, Any]:
        """`passed_totals` of one owner, by the owner index."""
        ...

    def hold(self, key: str) -> AbstractContextManager[None]:
        """Keep other processes off `key` (a conversation) until released, where the database can."""
        ...

    def close(self) -> None: ...
