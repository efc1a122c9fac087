"""Which stored session a request belongs to, and bringing that session up to date with it.

A request names its session with a header, or the session is found from the conversation itself
(its root and first step: the "conversation key"). Only steps the session has not seen are added,
after checking that the stored steps are a prefix of the request's history. A named session whose
history departs from the request is a conflict (HTTP 409); an unnamed one forks into a new session,
since two runs of one task are two conversations.

Several processes (proxy replicas) may share one store. The work on one conversation is serialized
by the store's lock on `lock_key` (PostgreSQL: an advisory lock; within a process, callers also hold
an in-process lock), and correctness never rests on it alone: step rows are keyed by (session,
index) and derived session ids are a function of the conversation key, so a second writer gets
StepConflict or SessionExists, catches up from the store and retries; it never forks or duplicates.
Loaded sessions stay in an LRU and read only the steps other processes appended since.
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
from contextweaver.store import Session, SessionExists, StepConflict, Store
from contextweaver.store.base import SessionInfo
from contextweaver.types import Step, WovenContext

SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")
DERIVED_PREFIX = "auto-"
ATTEMPTS = 5
"""Tries of one request when other writers keep appending to its session in between."""


class BadSessionId(ContextWeaverError, ValueError):
    pass


class DivergedHistory(ContextWeaverError, RuntimeError):
    """The request's history is not a continuation of the named session's stored steps."""


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


def lock_key(conversation: Conversation, session_id: str | None) -> str:
    if session_id is not None:
        return f"id:{session_id}"
    return f"key:{conversation.key or conversation.root_digest}"


def derived_id(key: str, number: int) -> str:
    """The id of the `number`-th (0-based) session started from one conversation key."""
    return f"{DERIVED_PREFIX}{key[:16]}" + (f"-{number + 1}" if number else "")


def matched_prefix(stored: list[str], incoming: list[str]) -> int:
    """How many leading steps two histories share."""
    count = 0
    for a, b in zip(stored, incoming, strict=False):
        if a != b:
            break
        count += 1
    return count


def continuation(session: Session, conversation: Conversation) -> list[Step] | None:
    """The request's steps after the session's stored ones, or None when it does not continue them.

    The usual request resends the stored messages unchanged: one comparison of the message lists
    (no per-step hashing) confirms it, and only the messages after them are read into steps.
    Otherwise (a reader normalized the messages, a step changed) the step digests decide.
    """
    raw, known = conversation.messages, session.messages
    at = len(known)
    boundary = raw is not None and (len(raw) == at or (len(raw) > at and raw[at].get("role") == "assistant"))
    if boundary and raw is not None and raw[:at] == known:
        return conversation.steps_from(at)
    if matched_prefix(session.digests, conversation.step_digests) < session.step_count:
        return None
    return conversation.steps[session.step_count :]


class SessionManager:
    """Sessions of one store for one proxy process: loaded on demand, kept in an LRU."""

    def __init__(
        self,
        store: Store,
        config: WeaverConfig,
        *,
        model: Model | None = None,
        budget: int | None = None,
        cache_size: int = 128,
    ) -> None:
        self.store = store
        self.config = config
        self.model = model
        self.budget = budget
        self.cache_size = cache_size
        self._cache: OrderedDict[str, Session] = OrderedDict()
        self._cache_lock = threading.Lock()

    def weave(self, conversation: Conversation, session_id: str | None) -> Woven:
        """Store the request's new steps in its session and weave the context for the next call."""
        with self.store.hold(lock_key(conversation, session_id)):
            for attempt in range(ATTEMPTS):
                try:
                    if session_id is not None:
                        return self._named(conversation, session_id)
                    return self._derived(conversation)
                except StepConflict:
                    if attempt == ATTEMPTS - 1:
                        raise
        raise AssertionError("unreachable")

    def _named(self, conversation: Conversation, session_id: str) -> Woven:
        info = self.store.session(session_id)
        if info is None:
            try:
                session = self._create(session_id, conversation, None)
                return self._advance(session, conversation.steps, conversation.format, True)
            except SessionExists:
                info = self.store.session(session_id)
                assert info is not None
        if info.root_digest != conversation.root_digest:
            raise DivergedHistory(
                f"session {session_id!r} was started with another system prompt or task; "
                "use a new session id for a new conversation"
            )
        session = self._current(info)
        new = continuation(session, conversation)
        if new is None:
            shared = matched_prefix(session.digests, conversation.step_digests)
            raise DivergedHistory(
                f"the request's history departs from session {session_id!r} at step {shared + 1} "
                f"(the session holds {session.step_count} steps, the request {len(conversation.steps)}); "
                "use a new session id for an edited or restarted conversation"
            )
        return self._advance(session, new, conversation.format, False)

    def _derived(self, conversation: Conversation) -> Woven:
        key = conversation.key
        if key is None:  # no step yet: nothing to store, the root goes out verbatim
            return Woven(None, None)
        candidates = sorted(self.store.sessions(key), key=lambda info: -info.steps)
        for info in candidates:  # the longest stored history the request continues
            session = self._current(info)
            new = continuation(session, conversation)
            if new is not None:
                return self._advance(session, new, conversation.format, False)
        for number in range(len(candidates), len(candidates) + 1000):
            session_id = derived_id(key, number)
            try:
                session = self._create(session_id, conversation, key)
            except SessionExists:  # another process started it just now: join it when it is ours
                found = self.store.session(session_id)
                if found is None or found.conversation_key != key:
                    continue
                session = self._current(found)
                new = continuation(session, conversation)
                if new is None:
                    continue
                return self._advance(session, new, conversation.format, False)
            return self._advance(session, conversation.steps, conversation.format, True)
        raise RuntimeError(f"could not find a free session id for conversation {key[:16]}")

    def _advance(self, session: Session, new: list[Step], fmt: str, created: bool) -> Woven:
        try:
            for step in new:
                session.add_step(step, fmt=fmt)
        finally:
            if session.broken:
                self._forget(session.id)
        context = session.context(self.budget)
        return Woven(session.id, context, len(new), created, tuple(session.notes))

    def _create(self, session_id: str, conversation: Conversation, key: str | None) -> Session:
        session = Session.create(
            self.store,
            session_id,
            conversation.root,
            self.config,
            model=self.model,
            conversation_key=key,
            meta={"format": conversation.format},
        )
        self._remember(session)
        return session

    def _current(self, info: SessionInfo) -> Session:
        """The loaded session brought up to `info` (reading only the steps appended since), or opened."""
        with self._cache_lock:
            session = self._cache.get(info.id)
            if session is not None:
                self._cache.move_to_end(info.id)
        if session is None or session.broken or session.step_count > info.steps:
            session = Session.open(self.store, info.id, model=self.model)
            self._remember(session)
        elif session.step_count < info.steps:
            session.catch_up()
        return session

    def _remember(self, session: Session) -> None:
        with self._cache_lock:
            self._cache[session.id] = session
            self._cache.move_to_end(session.id)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)

    def _forget(self, session_id: str) -> None:
        with self._cache_lock:
            self._cache.pop(session_id, None)
