"""Which stored session a request belongs to, and bringing that session up to date with it.

A request names its session with a header, or the session is found from the conversation itself
(its root and first step: the "conversation key"). Only steps the session has not seen are added,
after checking that the stored steps are a prefix of the request's history. A named session whose
history departs from the request is a conflict (HTTP 409); an unnamed one forks into a new session,
since two runs of one task are two conversations. Callers serialize work per `lock_key`; this class
is otherwise thread-safe. Loaded sessions are kept in a small LRU and reloaded when another process
appended to them.
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
from contextweaver.store.base import SessionExists, StepConflict, Store
from contextweaver.types import WovenContext

SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")
DERIVED_PREFIX = "auto-"


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
        for attempt in range(2):
            try:
                if session_id is not None:
                    return self._named(conversation, session_id)
                return self._derived(conversation)
            except StepConflict:
                if attempt:
                    raise
                self._forget(session_id)  # another process appended: reload and try once more
        raise AssertionError("unreachable")

    def _named(self, conversation: Conversation, session_id: str) -> Woven:
        info = self.store.session(session_id)
        created = False
        if info is None:
            try:
                session = self._create(session_id, conversation, None)
                created = True
            except SessionExists:
                session = self._load(session_id)
        else:
            if info.root_digest != conversation.root_digest:
                raise DivergedHistory(
                    f"session {session_id!r} was started with another system prompt or task; "
                    "use a new session id for a new conversation"
                )
            session = self._load(session_id, info.steps)
        shared = matched_prefix(session.digests, conversation.step_digests)
        if shared < session.step_count:
            raise DivergedHistory(
                f"the request's history departs from session {session_id!r} at step {shared + 1} "
                f"(the session holds {session.step_count} steps, the request {len(conversation.steps)}); "
                "use a new session id for an edited or restarted conversation"
            )
        return self._advance(session, conversation, created)

    def _derived(self, conversation: Conversation) -> Woven:
        key = conversation.key
        if key is None:  # no step yet: nothing to store, the root goes out verbatim
            return Woven(None, None)
        best = None
        candidates = self.store.sessions(key)
        for info in candidates:
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
                return self._advance(self._create(session_id, conversation, key), conversation, True)
            except SessionExists:
                continue
        raise RuntimeError(f"could not find a free session id for conversation {key[:16]}")

    def _advance(self, session: Session, conversation: Conversation, created: bool) -> Woven:
        new = conversation.steps[session.step_count :]
        try:
            for step in new:
                session.add_step(step, fmt=conversation.format)
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
        with self._cache_lock:
            self._cache[session.id] = session
            self._cache.move_to_end(session.id)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)

    def _forget(self, session_id: str | None) -> None:
        with self._cache_lock:
            if session_id is None:
                self._cache.clear()
            else:
                self._cache.pop(session_id, None)
