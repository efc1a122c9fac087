"""A ContextWeaver whose steps live in a durable store: crash-safe, resumable, inspectable.

    session = Session.create(store, "run-42", [system, task])
    session.add_step(step)           # woven, then committed with everything computed from it
    session.context(max_tokens=8000)
    ...
    session = Session.open(store, "run-42")   # after a restart: the same graph and context, nothing recomputed

`add_step` runs Algorithm 1, then commits in one transaction the raw step, the memory's annotation
(parents with confidence and reason, summaries, status, labels) and what extraction computed (facts,
token counts, placeholders, parsed test results). That commit is the acknowledgement: a crash after
it loses nothing, a crash before it stores nothing of the step. Reopening reads those rows back
into nodes: no observation is parsed, tokenized or analyzed again, so an LLM analyzer is not called
and the graph is the one that was acknowledged. The lazy context's last cut is stored too, so a
reopened session goes on from that frozen prefix instead of cutting anew. `catch_up` reads only the
steps another process appended since. Rows from stores written before the computed fields were kept (or a step whose
annotation never reached the disk) are replayed through the weaver, reusing stored annotations.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from contextweaver.config import WeaverConfig
from contextweaver.nodes.graph import DependencyGraph
from contextweaver.protocols import Model
from contextweaver.records import Message, Node, Step, WovenContext
from contextweaver.store.base import SessionInfo, SessionNotFound, Store, StoredStep, annotation_of, digest
from contextweaver.store.clean import storable, storable_messages
from contextweaver.store.nodes import StoredNode
from contextweaver.store.replay import StoredAnnotator, differences, signature, stored_signature
from contextweaver.weaver import ContextWeaver


class Session:
    """One conversation: a ContextWeaver plus the store that makes every acknowledged step durable."""

    def __init__(self, store: Store, info: SessionInfo, weaver: ContextWeaver) -> None:
        self.store = store
        self.info = info
        self.weaver = weaver
        self.digests: list[str] = []
        """Digest of each step's messages (index 1 first): how a resent history is matched."""
        self.messages: list[Message] = list(info.root)
        """The root's and every stored step's chat messages, in order: a resent history starts with them."""
        self.notes: list[str] = []
        self.broken = False
        """Set when the memory failed on a step: the graph may be ahead of the store, reopen the session."""

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
        owner: str | None = None,
        capability: str | None = None,
    ) -> Session:
        """Start a session (committed), its root being the system prompt and the task verbatim (a lone
        surrogate stored as U+FFFD, as in a step: `store/clean.py`)."""
        root = storable_messages(root)
        config = config or WeaverConfig.model_validate({})
        weaver = ContextWeaver(config, model=model)
        weaver.begin(root)  # validates the root before anything is stored
        info = store.create_session(
            session_id, root, config.model_dump(mode="json"), conversation_key=conversation_key, meta=meta,
            owner=owner, capability=capability,
        )  # fmt: skip
        return cls(store, info, weaver)

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
        """Resume from the store: the same graph, read back without parsing or analyzing anything again.

        `config` replaces the stored one (e.g. another memory-model URL); by default the session keeps
        the settings it was started with, so its graph stays the one that was acknowledged. `upto`
        rebuilds only the first steps, read-only, to inspect the context an earlier step received.
        """
        info = store.session(session_id)
        if info is None:
            raise SessionNotFound(f"no session {session_id!r} in {store.url}")
        stored = {"recall": False, **info.config}  # a session stored before recall goes on as it was woven
        weaver = ContextWeaver(config or WeaverConfig.model_validate(stored), model=model)
        weaver.begin(info.root)
        session = cls(store, info, weaver)
        session._apply(store.steps(session_id, 1, upto), write=upto is None)
        cut = store.cut(session_id) if upto is None else None
        if cut is not None and cut[0] < len(weaver.graph):  # as the last cut left it: no new cut
            weaver.lazy(cut[1]["max_tokens"]).restore(cut[1])
        return session

    def catch_up(self) -> int:
        """Read the steps other processes appended since this session was loaded; returns how many."""
        stored = self.store.steps(self.id, self.step_count + 1)
        self._apply(stored, write=True)
        return len(stored)

    def _apply(self, stored: Sequence[StoredStep], *, write: bool) -> None:
        """Add stored steps in order: restored from their rows, or replayed when the rows lack them."""
        for item in stored:
            if item.annotation is not None and item.computed is not None:
                node = item.computed.node(item.index, item.step, item.annotation)
                self.weaver.restore(node, item.annotation.labels)
            else:
                self._replay(item, write)
            self.digests.append(item.digest)
            self.messages += item.step.chat_messages()

    def _replay(self, item: StoredStep, write: bool) -> None:
        """A row without computed fields: run Algorithm 1 on it, reusing its stored annotation if any."""
        real = self.weaver.annotator
        replay = StoredAnnotator({item.index: item.annotation} if item.annotation else {}, real)
        self.weaver.annotator = replay
        before = len(self.graph.labels)
        try:
            node = self.weaver.add_step(item.step)
        finally:
            self.weaver.annotator = real
        if item.annotation is None:
            if write:
                self.store.save_annotation(
                    self.id, item.index, annotation_of(node, self.graph.labels[before:])
                )
                self.notes.append(
                    f"step {item.index} had no stored annotation (interrupted write): annotated now"
                )
            return
        self.notes += differences(signature(self.graph, node.index), stored_signature([item]))

    def add_step(self, step: Step, *, fmt: str | None = None) -> Node:
        """Weave the step into the graph, then commit it with its annotation and computed fields. A lone
        surrogate, which no UTF-8 store can hold, is stored (and woven) as U+FFFD (`store/clean.py`)."""
        step = storable(step)
        index = len(self.weaver.graph)
        step_digest = digest(step.messages or step.chat_messages())
        labels_before = len(self.weaver.graph.labels)
        try:  # woven before the commit: a step the memory cannot weave is never stored
            node = self.weaver.add_step(step)
            annotation = annotation_of(node, self.weaver.graph.labels[labels_before:])
            self.store.append_node(self.id, index, step, step_digest, fmt, annotation, StoredNode.of(node))
        except BaseException:
            self.broken = True  # the in-memory graph is ahead of the store: reopen the session
            raise
        self.digests.append(step_digest)
        self.messages += step.chat_messages()
        return node

    def context(self, max_tokens: int | None = None) -> WovenContext:
        """The context for the next call; a lazy cut is saved, so a reopened session continues from it
        (the same bytes, no second cut and no cache miss for the restart)."""
        context = self.weaver.context(max_tokens)
        if context.compacted:
            lazy = self.weaver.lazy(max_tokens)
            self.store.save_cut(self.id, lazy.upto, {"max_tokens": max_tokens, **lazy.state()})
        return context
