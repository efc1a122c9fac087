"""Which stored session a request belongs to, and bringing that session up to date with it.

A request names its session with a header, or the session is found from the conversation itself
(its root and first step: the "conversation key"). Only steps the session has not seen are added,
after checking that the stored steps are a prefix of the request's history, or, for a named
session of an agent that drops its oldest turns, that the request starts inside the stored tail. A
named session whose history departs from the request is a conflict (HTTP 409); an unnamed one forks
into a new session, since two runs of one task are two conversations. A session belongs to the
credential that created it (`owner`, a keyed hash): another credential can neither append to it nor
find it by its conversation key.

Several processes (proxy replicas) may share one store. The work on one conversation is serialized
by the store's lock on `lock_key` (PostgreSQL: an advisory lock; within a process, callers also hold
an in-process lock), and correctness never rests on it alone: step rows are keyed by (session,
index) and derived session ids are a function of the conversation key, so a second writer gets
StepConflict or SessionExists, catches up from the store and retries; it never forks or duplicates.
Loaded sessions stay in an LRU bounded by count and estimated bytes (root included, session_bytes.py),
and read only the steps other processes appended since; a session larger than the whole bound is woven
from the store at each request, not kept.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from contextweaver.config import WeaverConfig
from contextweaver.errors import ContextWeaverError
from contextweaver.protocols import Model
from contextweaver.records import Step, WovenContext
from contextweaver.serve.sessions.recall import capability_of, for_session
from contextweaver.serve.sessions.session_bytes import DEFAULT_BOUND, multipliers, root_bytes, step_bytes
from contextweaver.serve.wires.conversation import Conversation
from contextweaver.store import Session, SessionExists, StepConflict, Store
from contextweaver.store.base import SessionInfo, digest
from contextweaver.tokens import count_message
from contextweaver.weaving.budget import GAP_STEPS, Budget, BudgetError, Need, ahead_of

log = logging.getLogger("contextweaver.serve")
SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")
DERIVED_PREFIX = "auto-"
ATTEMPTS = 5
"""Tries of one request when other writers keep appending to its session in between."""


SETTING = "contextweaver serve --budget"
"""Where an operator sets the proxy's budget, named in every refusal."""
ATTEMPTS_KEPT = 256
"""Conversations whose first refused attempt is remembered (for the refusal of a retry with more tools)."""


class BadSessionId(ContextWeaverError, ValueError):
    pass


class DivergedHistory(ContextWeaverError, RuntimeError):
    """The request's history is not a continuation of the named session's stored steps."""


class BudgetTooSmall(ContextWeaverError, ValueError):
    """The proxy's budget cannot hold this session's root and newest step: a 400 that says what to raise
    (the steps are stored; a larger budget continues the session)."""

    def __init__(self, message: str, session_id: str) -> None:
        super().__init__(message)
        self.session_id = session_id

    def __reduce__(self) -> tuple[type, tuple[str, str]]:  # from a weaving process, with the session
        return type(self), (str(self), self.session_id)


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
    unchanged: bool = False
    """The context and the pending tail are the request's own messages (lazy mode under the mark):
    the request can go out as it came, with nothing rendered."""
    newest: str | None = None
    """Digest of the newest added step's call and output (None: none added), for the loop guard."""
    steps: int = 0
    """The session's stored steps after this request (where its request sits on the session's timeline)."""


def passes_through(woven: Woven, conversation: Conversation) -> bool:
    """Whether the woven request (context, then the pending tail) equals the incoming messages."""
    context, raw = woven.context, conversation.messages
    if context is None or raw is None:
        return False
    woven_count = len(context.messages)
    return (
        len(raw) == woven_count + len(conversation.pending)
        and raw[:woven_count] == context.messages
        and raw[woven_count:] == conversation.pending
    )


def check_session_id(value: str) -> str:
    if not SESSION_ID.match(value):
        raise BadSessionId(
            "a session id is 1-128 characters of letters, digits and . _ : @ - (starting with a letter or digit)"
        )
    if value.startswith(DERIVED_PREFIX):
        raise BadSessionId(f"session ids starting with {DERIVED_PREFIX!r} are reserved for derived sessions")
    return value


def attempt_key(conversation: Conversation, owner: str | None) -> str:
    """A conversation across a client's retries, which may change its system prompt and tools (Claude Code
    does): the credential and the task, the root's first user message."""
    task = next((m for m in conversation.root if m.get("role") == "user"), conversation.root[-1:])
    return digest([{"owner": owner, "task": task}])


def lock_key(conversation: Conversation, session_id: str | None, owner: str | None = None) -> str:
    if session_id is not None:
        return f"id:{session_id}"
    return f"key:{owner}:{conversation.key or conversation.root_digest}"


def derived_key(conversation: Conversation, owner: str | None) -> str | None:
    """The conversation key, scoped to the caller's credential: equal histories of two callers never meet."""
    key = conversation.key
    if key is None or owner is None:
        return key
    return digest([{"owner": owner, "key": key}])


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
        cache_bytes: int = DEFAULT_BOUND,
    ) -> None:
        self.store = store
        self.config = config
        self.model = model
        self.budget = budget
        self.cache_size = cache_size
        self.cache_bytes = cache_bytes
        self._cache: OrderedDict[str, Session] = OrderedDict()
        self._sizes: dict[str, int] = {}
        self.on_evict: Callable[[str], object] = lambda session_id: None
        """Called with each session dropped from the cache (the caller's per-session state goes with it)."""
        self._cache_lock = threading.Lock()
        self._first_attempts: OrderedDict[str, tuple[Need, int]] = OrderedDict()
        """Per refused conversation (credential and task): its first refused attempt's root and tool tokens."""

    def weave(self, conversation: Conversation, session_id: str | None, owner: str | None = None) -> Woven:
        """Store the request's new steps in its session and weave the context for the next call."""
        with self.store.hold(lock_key(conversation, session_id, owner)):
            for attempt in range(ATTEMPTS):
                try:
                    if session_id is not None:
                        woven = self._named(conversation, session_id, owner)
                    else:
                        woven = self._derived(conversation, owner)
                    woven.unchanged = passes_through(woven, conversation)
                    return woven
                except StepConflict:
                    if attempt == ATTEMPTS - 1:
                        raise
        raise AssertionError("unreachable")

    def _named(self, conversation: Conversation, session_id: str, owner: str | None) -> Woven:
        info = self.store.session(session_id)
        if info is None:
            try:
                session = self._create(session_id, conversation, None, owner)
                return self._advance(session, conversation.steps, conversation, True)
            except SessionExists:
                info = self.store.session(session_id)
                assert info is not None
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
        session = self._current(info)
        new = continuation(session, conversation)
        overlap = trimmed_overlap(session.digests, conversation.step_digests) if new is None else None
        if overlap is not None:
            new = conversation.steps[overlap:]
        if new is None:
            shared = matched_prefix(session.digests, conversation.step_digests)
            raise DivergedHistory(
                f"the request's history departs from session {session_id!r} at step {shared + 1} "
                f"(the session holds {session.step_count} steps, the request {len(conversation.steps)}); "
                "use a new session id for an edited or restarted conversation"
            )
        return self._advance(session, new, conversation, False)

    def _derived(self, conversation: Conversation, owner: str | None) -> Woven:
        key = derived_key(conversation, owner)
        if key is None:  # no step yet: nothing to store, the root goes out verbatim if it fits
            self._check_root(conversation, owner)
            return Woven(None, None)
        mine = [info for info in self.store.sessions(key) if info.owner == owner]
        candidates = sorted(mine, key=lambda info: -info.steps)
        for info in candidates:  # the longest stored history the request continues
            session = self._current(info)
            new = continuation(session, conversation)
            if new is not None:
                return self._advance(session, new, conversation, False)
        for number in range(len(candidates), len(candidates) + 1000):
            session_id = derived_id(key, number)
            try:
                session = self._create(session_id, conversation, key, owner)
            except SessionExists:  # another process started it just now: join it when it is ours
                found = self.store.session(session_id)
                if found is None or found.conversation_key != key or found.owner != owner:
                    continue
                session = self._current(found)
                new = continuation(session, conversation)
                if new is None:
                    continue
                return self._advance(session, new, conversation, False)
            return self._advance(session, conversation.steps, conversation, True)
        raise RuntimeError(f"could not find a free session id for conversation {key[:16]}")

    def _advance(self, session: Session, new: list[Step], conversation: Conversation, created: bool) -> Woven:
        try:
            for step in new:
                session.add_step(step, fmt=conversation.format)
        finally:
            if session.broken:
                self._forget(session.id)
        self._grow(session, new)
        try:
            context = session.context(self._budget_for(conversation))
        except BudgetError as exc:  # restated with the request's tools, and room for the next step
            budget = self._budget(conversation)
            advice = str(exc) if exc.need is None else budget.refusal(ahead_of(exc.need))
            raise BudgetTooSmall(advice, session.id) from exc
        newest = digest([{"action": new[-1].action, "observation": new[-1].observation}]) if new else None
        return Woven(session.id, context, len(new), created, tuple(session.notes), newest=newest,
                     steps=session.step_count)  # fmt: skip

    def _budget(self, conversation: Conversation) -> Budget:
        """The proxy's budget for this request: its tool definitions are sent whole beside the messages."""
        assert self.budget is not None
        return Budget(self.budget, self.config.token_safety_factor, conversation.reserved, SETTING)

    def _budget_for(self, conversation: Conversation) -> int | None:
        """The budget of the request's messages in the caller's tokens (the weaver applies the safety factor):
        the proxy's, less what its tool definitions take (at least 1: the weaver then refuses it, restated)."""
        if self.budget is None:
            return None
        budget = self._budget(conversation)
        return max(1, int(budget.tokens - budget.in_model_tokens(budget.tools)))

    def _check_root(self, conversation: Conversation, owner: str | None) -> None:
        """A root above the budget is refused at the first request, before the agent makes a call, with a
        value that holds the next request too; a retry that sends more tools is told the first attempt's."""
        if self.budget is None:
            return
        need = Need(sum(count_message(m) for m in conversation.root))
        budget = self._budget(conversation)
        if budget.holds(need):
            return
        key = attempt_key(conversation, owner)
        with self._cache_lock:
            first, tools = self._first_attempts.setdefault(key, (need, budget.tools))
            self._first_attempts.move_to_end(key)
            while len(self._first_attempts) > ATTEMPTS_KEPT:
                self._first_attempts.popitem(last=False)
        if tools < budget.tools:
            raise BudgetTooSmall(budget.retried(ahead_of(need), ahead_of(first), tools), "")
        raise BudgetTooSmall(budget.refusal(ahead_of(need)), "")

    def _create(
        self, session_id: str, conversation: Conversation, key: str | None, owner: str | None
    ) -> Session:
        self._check_root(conversation, owner)
        cap = capability_of(self.store, session_id)
        session = Session.create(
            self.store,
            session_id,
            conversation.root,
            for_session(self.config, cap),
            model=self.model,
            conversation_key=key,
            meta={"format": conversation.format, "budget": self.budget},
            owner=owner,
            capability=cap,
        )
        self._remember(session)
        log.info("session %s: %s", session_id, self._advice(conversation))
        return session

    def _advice(self, conversation: Conversation) -> str:
        """The root's size with its tools and the budgets that hold it: one line at a session's first request."""
        budget = Budget(self.budget or 0, self.config.token_safety_factor, conversation.reserved, SETTING)
        need = ahead_of(Need(sum(count_message(m) for m in conversation.root)))
        where = f"--budget {self.budget}" if self.budget else "no --budget: nothing is cut"
        return (
            f"root {need.root + budget.tools:,} tokens, {budget.tools:,} of them tool definitions ({where}; "
            f"least {budget.least(need)}, suggested {budget.suggested(need)}: a cut about every {GAP_STEPS} steps)"
        )

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
            added = session.catch_up()
            self._grow(session, [node.step for node in session.graph.nodes[len(session.graph) - added :]])
        return session

    def _remember(self, session: Session) -> None:
        rates = multipliers(session.weaver.config)
        size = root_bytes(session.info.root, rates) + sum(
            step_bytes(n.step, rates) for n in session.graph.nodes[1:]
        )
        with self._cache_lock:
            self._cache[session.id] = session
            self._cache.move_to_end(session.id)
            self._sizes[session.id] = size
            self._evict()

    def _grow(self, session: Session, added: list[Step]) -> None:
        rates = multipliers(session.weaver.config)
        with self._cache_lock:
            if session.id in self._sizes:
                self._sizes[session.id] += sum(step_bytes(step, rates) for step in added)
                self._evict()

    def _evict(self) -> None:
        """Drop the least recently used sessions beyond the count or byte bound, and the newest at once when
        it alone exceeds the bytes (it is then read from the store at each request, the others stay)."""
        newest = next(reversed(self._cache), None)
        if newest is not None and self._sizes[newest] > self.cache_bytes:
            log.info("session %s: about %d MB loaded, more than the session cache's %d MB: not kept, read from "
                     "the store at each request", newest, self._sizes[newest] >> 20, self.cache_bytes >> 20)  # fmt: skip
            self._drop(newest)
        while len(self._cache) > self.cache_size or sum(self._sizes.values()) > self.cache_bytes:
            self._drop(next(iter(self._cache)))

    def _drop(self, session_id: str) -> None:
        self._cache.pop(session_id, None)
        self._sizes.pop(session_id, None)
        self.on_evict(session_id)

    def holds(self, session_id: str) -> bool:
        """Whether the session is in the cache (a woven one is not when it alone exceeds the byte bound)."""
        with self._cache_lock:
            return session_id in self._cache

    @property
    def cached_bytes(self) -> int:
        with self._cache_lock:
            return sum(self._sizes.values())

    def _forget(self, session_id: str) -> None:
        with self._cache_lock:
            self._drop(session_id)
