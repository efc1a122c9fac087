"""Which stored session a request belongs to, and bringing that session up to date with it.

A request names its session with a header, or the session is found from the conversation itself
(its root and first step: the "conversation key"). Only steps the session has not seen are added,
after checking that the stored steps are a prefix of the request's history, or, for a named
session of an agent that drops its oldest turns, that the request starts inside the stored tail. A
named session whose history departs from the request is a conflict (HTTP 409); an unnamed one forks
into a new session, since two runs of one task are two conversations. A session belongs to the credential that
created it (`owner`, a keyed hash): another credential can neither append to it nor find it by
its conversation key. Callers serialize work per `lock_key`; this class is otherwise thread-safe.
Loaded sessions are kept in an LRU bounded by their estimated bytes and reloaded when another
process appended to them.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass

from contextweaver.config import WeaverConfig
from contextweaver.errors import ContextWeaverError
from contextweaver.protocols import Model
from contextweaver.serve.conversation import Conversation
from contextweaver.session import Session
from contextweaver.store.base import SessionExists, StepConflict, Store, digest
from contextweaver.types import Step, WovenContext

SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")
DERIVED_PREFIX = "auto-"


class BadSessionId(ContextWeaverError, ValueError):
    pass


class DivergedHistory(ContextWeaverError, RuntimeError):
    """The request's history is not a continuation of the named session's stored steps."""


class NotOwner(ContextWeaverError, RuntimeError):
    """The named session was created with another credential."""


@dataclass
class Woven:
    """What a request gets: its session (None when there is nothing to store yet) and the context."""

    session_id: str | None
    context: WovenContext | None
    added: int = 0
    created: bool = False
    notes: tuple[str, ...] = ()


def check_session_id(value: str) -> str:
    if not SESSION_ID.match(value):
        raise BadSessionId(
            "a session id is 1-128 characters of letters, digits and . _ : @ - (starting with a letter or digit)"
        )
    if value.startswith(DERIVED_PREFIX):
        raise BadSessionId(f"session ids starting with {DERIVED_PREFIX!r} are reserved for derived sessions")
    return value


def lock_key(conversation: Conversation, session_id: str | None, owner: str | None = None) -> str:
    if session_id is not None:
        return f"id:{session_id}"
    return f"key:{owner}:{conversation.key or conversation.root_digest}"


def trimmed_overlap(stored: list[str], incoming: list[str]) -> int | None:
    """How many leading request steps are the stored session's last ones (an agent that trims old turns).

    None when the request does not continue the session's tail (an edited or restarted history).
    """
    if not incoming or not stored:
        return None
    for start in range(len(stored) - 1, -1, -1):
        if stored[start] == incoming[0]:
            tail = stored[start:]
            return len(tail) if incoming[: len(tail)] == tail else None
    return None


def derived_key(conversation: Conversation, owner: str | None) -> str | None:
    """The conversation key, scoped to the caller's credential: equal histories of two callers never meet."""
    key = conversation.key
    if key is None or owner is None:
        return key
    return digest([{"owner": owner, "key": key}])


def step_bytes(step: Step) -> int:
    """Rough memory of a loaded step: its text is held about three times (raw, messages, line hashes)."""
    return 3 * (len(step.observation) + len(step.thought) + len(step.action)) + 2048


def matched_prefix(stored: list[str], incoming: list[str]) -> int:
    """How many leading steps two histories share."""
    count = 0
    for a, b in zip(stored, incoming, strict=False):
        if a != b:
            break
        count += 1
    return count


class SessionManager:
    def __init__(
        self,
        store: Store,
        config: WeaverConfig,
        *,
        model: Model | None = None,
        budget: int | None = None,
        cache_size: int = 128,
        cache_bytes: int = 512 * 1024 * 1024,
    ) -> None:
        self.store = store
        self.config = config
        self.model = model
        self.budget = budget
        self.cache_size = cache_size
        self.cache_bytes = cache_bytes
        self._cache: OrderedDict[str, Session] = OrderedDict()
        self._sizes: dict[str, int] = {}
        self._cache_lock = threading.Lock()

    def weave(self, conversation: Conversation, session_id: str | None, owner: str | None = None) -> Woven:
        """Store the request's new steps in its session and weave the context for the next call."""
        for attempt in range(2):
            try:
                if session_id is not None:
                    return self._named(conversation, session_id, owner)
                return self._derived(conversation, owner)
            except StepConflict:
                if attempt:
                    raise
                self._forget(session_id)  # another process appended: reload and try once more
        raise AssertionError("unreachable")

    def _named(self, conversation: Conversation, session_id: str, owner: str | None) -> Woven:
        info = self.store.session(session_id)
        created = False
        if info is None:
            try:
                session = self._create(session_id, conversation, None, owner)
                created = True
            except SessionExists:
                return self._named(conversation, session_id, owner)
        else:
            if info.owner != owner:
                raise NotOwner(
                    f"session id {session_id!r} is taken by another credential: choose another, "
                    "unguessable id (ids are not shared between credentials)"
                )
            if info.root_digest != conversation.root_digest:
                raise DivergedHistory(
                    f"session {session_id!r} was started with another system prompt or task; "
                    "use a new session id for a new conversation"
                )
            session = self._load(session_id, info.steps)
        shared = matched_prefix(session.digests, conversation.step_digests)
        known = (
            session.step_count
            if shared == session.step_count
            else trimmed_overlap(session.digests, conversation.step_digests)
        )
        if known is None:
            raise DivergedHistory(
                f"the request's history departs from session {session_id!r} at step {shared + 1} "
                f"(the session holds {session.step_count} steps, the request {len(conversation.steps)}); "
                "use a new session id for an edited or restarted conversation"
            )
        return self._advance(session, conversation, created, known)

    def _derived(self, conversation: Conversation, owner: str | None) -> Woven:
        key = derived_key(conversation, owner)
        if key is None:  # no step yet: nothing to store, the root goes out verbatim
            return Woven(None, None)
        best = None
        candidates = self.store.sessions(key)
        for info in candidates:
            if info.owner != owner:
                continue
            if info.steps > len(conversation.steps) or (best is not None and info.steps <= best.steps):
                continue
            stored = self._digests(info.id, info.steps)
            if matched_prefix(stored, conversation.step_digests) == len(stored):
                best = info
        if best is not None:
            return self._advance(self._load(best.id, best.steps), conversation, False)
        for number in range(len(candidates), len(candidates) + 1000):
            session_id = f"{DERIVED_PREFIX}{key[:16]}" + (f"-{number + 1}" if number else "")
            try:
                return self._advance(self._create(session_id, conversation, key, owner), conversation, True)
            except SessionExists:
                continue
        raise RuntimeError(f"could not find a free session id for conversation {key[:16]}")

    def _advance(
        self, session: Session, conversation: Conversation, created: bool, known: int | None = None
    ) -> Woven:
        """Add the request's steps after its first `known` ones (default: as many as the session holds)."""
        new = conversation.steps[session.step_count if known is None else known :]
        try:
            for step in new:
                session.add_step(step, fmt=conversation.format)
        finally:
            if session.broken:
                self._forget(session.id)
        self._grow(session.id, sum(step_bytes(step) for step in new))
        context = session.context(self.budget)
        return Woven(session.id, context, len(new), created, tuple(session.notes))

    def _create(
        self, session_id: str, conversation: Conversation, key: str | None, owner: str | None
    ) -> Session:
        session = Session.create(
            self.store,
            session_id,
            conversation.root,
            self.config,
            model=self.model,
            conversation_key=key,
            meta={"format": conversation.format},
            owner=owner,
        )
        self._remember(session)
        return session

    def _digests(self, session_id: str, stored_steps: int) -> list[str]:
        with self._cache_lock:
            session = self._cache.get(session_id)
        if session is not None and session.step_count == stored_steps:
            return session.digests
        return self.store.digests(session_id)

    def _load(self, session_id: str, stored_steps: int | None = None) -> Session:
        """The loaded session, reloaded from the store when it holds more steps than we have."""
        with self._cache_lock:
            session = self._cache.get(session_id)
            if session is not None:
                self._cache.move_to_end(session_id)
        if stored_steps is None:
            stored_steps = self.store.step_count(session_id)
        if session is None or session.step_count != stored_steps:
            session = Session.open(self.store, session_id, model=self.model)
            self._remember(session)
        return session

    def _remember(self, session: Session) -> None:
        size = sum(step_bytes(node.step) for node in session.graph.nodes[1:])
        with self._cache_lock:
            self._cache[session.id] = session
            self._cache.move_to_end(session.id)
            self._sizes[session.id] = size
            self._evict()

    def _grow(self, session_id: str, added: int) -> None:
        with self._cache_lock:
            if session_id in self._sizes:
                self._sizes[session_id] += added
                self._evict()

    def _evict(self) -> None:
        """Drop the least recently used sessions beyond the count or byte bound (the newest stays)."""
        while len(self._cache) > 1 and (
            len(self._cache) > self.cache_size or sum(self._sizes.values()) > self.cache_bytes
        ):
            evicted, _ = self._cache.popitem(last=False)
            self._sizes.pop(evicted, None)

    @property
    def cached_bytes(self) -> int:
        with self._cache_lock:
            return sum(self._sizes.values())

    def _forget(self, session_id: str | None) -> None:
        with self._cache_lock:
            if session_id is None:
                self._cache.clear()
                self._sizes.clear()
            else:
                self._cache.pop(session_id, None)
                self._sizes.pop(session_id, None)
