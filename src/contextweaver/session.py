"""A ContextWeaver whose steps live in a durable store: crash-safe, resumable, inspectable.

    session = Session.create(store, "run-42", [system, task])
    session.add_step(step)           # the raw step is committed before the memory works on it
    session.context(max_tokens=8000)
    ...
    session = Session.open(store, "run-42")   # after a restart: the same graph, no analyzer calls

`add_step` commits the raw step first (that commit is the acknowledgement: a crash after it loses
nothing), then runs Algorithm 1 and commits the annotation (parents with confidence and reason,
summaries, status, labels). Resuming replays the stored steps through a ContextWeaver whose
annotator returns the stored annotations, so an LLM analyzer is not called again and the graph is
the one that was acknowledged; the validation tracker is rebuilt by the replay itself. A step whose
annotation never reached the disk (a crash between the two commits) is annotated on resume.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from contextweaver.annotate import Annotation
from contextweaver.config import WeaverConfig
from contextweaver.graph import DependencyGraph
from contextweaver.protocols import Annotator, Model
from contextweaver.store.base import (
    SessionInfo,
    SessionNotFound,
    Store,
    StoredAnnotation,
    annotation_of,
    digest,
)
from contextweaver.types import Message, Node, Step, ValidationStatus, WovenContext
from contextweaver.weaver import ContextWeaver

NodeSignature = tuple[int, tuple[tuple[int, float, str], ...], str, int | None, str, str]
"""(index, parents as (index, confidence, reason), status, superseded_by, summary, dependency summary)."""


class StoredAnnotator:
    """Returns stored annotations for already-stored steps; asks the real annotator for the rest."""

    def __init__(self, stored: dict[int, StoredAnnotation], inner: Annotator) -> None:
        self.stored = stored
        self.inner = inner
        self.fresh: list[int] = []

    def annotate(
        self, node: Node, candidates: Sequence[Node], graph: DependencyGraph, task: str, m: int
    ) -> Annotation:
        found = self.stored.get(node.index)
        if found is None:
            self.fresh.append(node.index)
            return self.inner.annotate(node, candidates, graph, task, m)
        node.summary = found.summary
        return Annotation(found.summary, list(found.parents), found.dependency_summary)


class Session:
    """One conversation: a ContextWeaver plus the store that makes every acknowledged step durable."""

    def __init__(self, store: Store, info: SessionInfo, weaver: ContextWeaver, digests: list[str]) -> None:
        self.store = store
        self.info = info
        self.weaver = weaver
        self.digests = digests
        """Digest of each step's messages (index 1 first): how a resent history is matched."""
        self.notes: list[str] = []
        self.broken = False
        """Set when the memory failed after a step was committed: reopen the session from the store."""

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def step_count(self) -> int:
        return len(self.digests)

    @property
    def graph(self) -> DependencyGraph:
        return self.weaver.graph

    @classmethod
    def create(
        cls,
        store: Store,
        session_id: str,
        root: Sequence[Message],
        config: WeaverConfig | None = None,
        *,
        model: Model | None = None,
        conversation_key: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Session:
        """Start a session (committed), its root being the system prompt and the task verbatim."""
        config = config or WeaverConfig.model_validate({})
        weaver = ContextWeaver(config, model=model)
        weaver.begin(root)  # validates the root before anything is stored
        info = store.create_session(
            session_id, root, config.model_dump(mode="json"), conversation_key=conversation_key, meta=meta
        )
        return cls(store, info, weaver, [])

    @classmethod
    def open(
        cls,
        store: Store,
        session_id: str,
        *,
        model: Model | None = None,
        config: WeaverConfig | None = None,
        upto: int | None = None,
    ) -> Session:
        """Resume from the store: the same graph, rebuilt without calling the analyzer again.

        `config` replaces the stored one (e.g. another memory-model URL); by default the session keeps
        the settings it was started with, so its graph stays the one that was acknowledged. `upto`
        rebuilds only the first steps, read-only, to inspect the context an earlier step received.
        """
        info = store.session(session_id)
        if info is None:
            raise SessionNotFound(f"no session {session_id!r} in {store.url}")
        weaver = ContextWeaver(config or WeaverConfig.model_validate(info.config), model=model)
        weaver.begin(info.root)
        stored = store.steps(session_id)
        if upto is not None:
            stored = [s for s in stored if s.index <= upto]
        annotations = {s.index: s.annotation for s in stored if s.annotation is not None}
        real = weaver.annotator
        replay = StoredAnnotator(annotations, real)
        weaver.annotator = replay
        fresh_labels: dict[int, StoredAnnotation] = {}
        try:
            for item in stored:
                before = len(weaver.graph.labels)
                node = weaver.add_step(item.step)
                if node.index in replay.fresh:
                    fresh_labels[node.index] = annotation_of(node, weaver.graph.labels[before:])
        finally:
            weaver.annotator = real
        session = cls(store, info, weaver, [s.digest for s in stored])
        for index, annotation in fresh_labels.items() if upto is None else ():
            store.save_annotation(session_id, index, annotation)
            session.notes.append(f"step {index} had no stored annotation (interrupted write): annotated now")
        session.notes += differences(signature(weaver.graph), stored_signature(stored))
        return session

    def add_step(self, step: Step, *, fmt: str | None = None) -> Node:
        """Commit the step, then weave it into the graph and commit the annotation."""
        index = len(self.weaver.graph)
        step_digest = digest(step.messages or step.chat_messages())
        self.store.append_step(self.id, index, step, step_digest, fmt)  # the acknowledgement point
        self.digests.append(step_digest)
        labels_before = len(self.weaver.graph.labels)
        try:
            node = self.weaver.add_step(step)
        except BaseException:
            self.broken = True  # the step is stored; a reopen annotates it
            raise
        self.store.save_annotation(
            self.id, index, annotation_of(node, self.weaver.graph.labels[labels_before:])
        )
        return node

    def context(self, max_tokens: int | None = None) -> WovenContext:
        return self.weaver.context(max_tokens)


def signature(graph: DependencyGraph) -> list[NodeSignature]:
    """What "the same graph" means: parents, statuses, supersessions and summaries of every step."""
    return [
        (
            node.index,
            tuple((p.index, round(p.confidence, 6), p.reason) for p in node.parents),
            str(node.validation_status),
            node.superseded_by,
            node.summary,
            node.dependency_summary,
        )
        for node in graph.nodes[1:]
    ]


def stored_signature(stored: Sequence[Any]) -> list[NodeSignature]:
    """The same signature read from stored rows: initial statuses with the later labels applied."""
    status: dict[int, str] = {}
    superseded: dict[int, int | None] = {}
    for item in stored:
        if item.annotation is not None:
            status[item.index] = item.annotation.validation_status
            superseded.setdefault(item.index, None)
            for label in item.annotation.labels:
                status[label.index] = str(label.status)
                if label.status == ValidationStatus.SUPERSEDED:
                    superseded[label.index] = label.by
    return [
        (
            item.index,
            tuple((p.index, round(p.confidence, 6), p.reason) for p in item.annotation.parents),
            status[item.index],
            superseded[item.index],
            item.annotation.summary,
            item.annotation.dependency_summary,
        )
        for item in stored
        if item.annotation is not None
    ]


def differences(rebuilt: list[NodeSignature], stored: list[NodeSignature]) -> list[str]:
    """Where a rebuilt graph departs from the stored rows (e.g. a newer test parser relabels a step)."""
    by_index = {s[0]: s for s in stored}
    fields = ("parents", "status", "superseded_by", "summary", "dependency_summary")
    out = []
    for node in rebuilt:
        old = by_index.get(node[0])
        if old is None:
            continue
        changed = [name for name, a, b in zip(fields, node[1:], old[1:], strict=True) if a != b]
        if changed:
            out.append(f"step {node[0]}: rebuilt {', '.join(changed)} differ from the stored ones")
    return out
