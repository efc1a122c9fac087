"""Per session: how much of each forwarded request a provider's prompt cache could serve, and how much
the upstream says it did serve (`usage` fields), kept in memory for the session's API view.

The simulated share comes from `contextweaver.prompt_cache.PrefixCache` (the longest message prefix
shared with an earlier request of the session). A second simulator sees each request's history as
the agent sent it, whole: what passing it through would have cost (`Simulated`), the counterfactual
the proxy's measured bill is compared with. The provider's own counts are read by usage.py.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from contextweaver.prompt_cache import PRICES, CachePrices, CacheUse, PrefixCache
from contextweaver.records import Message
from contextweaver.serve.conversation import Conversation
from contextweaver.serve.usage import Usage

PROVIDER = {"anthropic": "anthropic"}
"""The prices a wire's answers are billed at (every other wire: OpenAI's)."""


def prices_of(wire: str) -> CachePrices:
    return PRICES[PROVIDER.get(wire, "openai")]


@dataclass(frozen=True)
class Simulated:
    """One request in both worlds: as forwarded (`sent`) and as the agent sent it (`full`)."""

    sent: CacheUse
    full: CacheUse
    tools: int = 0
    """Tokens of the tool definitions, sent first with every request: a cached prefix after the first."""
    first: bool = True

    def billed(self, prices: CachePrices) -> tuple[float, float]:
        """Simulated input cost (base-price tokens) of the request as sent and as passed through whole."""
        return self._billed(prices, self.sent), self._billed(prices, self.full)

    def _billed(self, prices: CachePrices, use: CacheUse) -> float:
        shared = 0 if self.first else use.shared + self.tools
        return prices.billed(use.tokens + self.tools, prices.cached(shared))


class Simulation:
    """The two prefix caches of one session; message token counts are shared between them."""

    def __init__(self) -> None:
        self.sent = PrefixCache()
        self.full = PrefixCache(tokens=self.sent.token_counts)
        self.requests = 0

    def request(self, sent: Sequence[Message], full: Sequence[Message], tools: int = 0,
                seen: Sequence[Message] = ()) -> Simulated:  # fmt: skip
        """`seen`: what the provider got before this request under no session (see `opening`)."""
        if seen and not self.requests:
            self.sent.request(seen)
            self.full.request(seen)
            self.requests += 1
        self.requests += 1
        return Simulated(self.sent.request(sent), self.full.request(full), tools, self.requests == 1)


def opening(created: bool, named: bool, messages: Sequence[Message], root: int) -> list[Message]:
    """What the provider had seen of a session before the first request recorded under it.

    A session found by its conversation (no session header) is created by the request holding its first
    finished step; the agent's first call, which sent the root alone, had no session to be recorded under,
    yet the provider cached that root: without it a session's second request showed 0.000 cached. A named
    session records its first call itself."""
    return list(messages[:root]) if created and not named else []


def full_messages(conversation: Conversation) -> list[Message]:
    """The history as the agent sent it (rebuilt from its steps for a conversation built without one)."""
    if conversation.messages is not None:
        return conversation.messages
    steps = chain.from_iterable(step.chat_messages() for step in conversation.steps)
    return [*conversation.root, *steps, *conversation.pending]


@dataclass
class SessionCache:
    requests: int = 0
    tokens: int = 0
    cached_prefix_tokens: int = 0
    """Simulated: tokens a prefix cache serves (Anthropic's rule: at least 1024 shared tokens)."""
    provider_reports: int = 0
    provider_cached_tokens: int = 0
    """Summed from the upstream's `usage`, over the answers that reported it."""
    simulation: Simulation | None = field(default=None, repr=False)
    """Kept while the session cache holds the session (it holds the session's last history)."""

    def summary(self) -> dict[str, Any]:
        names = ("requests", "tokens", "cached_prefix_tokens", "provider_reports", "provider_cached_tokens")
        data: dict[str, Any] = {name: getattr(self, name) for name in names}
        data["cached_prefix_share"] = (
            round(self.cached_prefix_tokens / self.tokens, 4) if self.tokens else 0.0
        )
        return data


class CacheLedger:
    """Thread-safe and bounded: the counts of the `max_sessions` most recently used sessions (least recently
    used forgotten first), and a simulation only for a session that `holds` says the session cache holds. A
    simulation keeps the session's last history, and a thread-mode proxy simulates in its own process: with
    `forget` called on each session the cache drops, the simulations stay within the cache's byte bound
    (`--session-cache-mb`, whose measured rates count them: session_bytes.py), as in a weaving process."""

    def __init__(
        self, max_sessions: int = 256, holds: Callable[[str], bool] = lambda session_id: False
    ) -> None:
        self.max_sessions = max_sessions
        self.holds = holds
        self._sessions: OrderedDict[str, SessionCache] = OrderedDict()
        self._lock = threading.Lock()

    def _get(self, session_id: str) -> SessionCache:
        with self._lock:
            entry = self._sessions.setdefault(session_id, SessionCache())
            self._sessions.move_to_end(session_id)
            while len(self._sessions) > self.max_sessions:
                self._sessions.popitem(last=False)
            return entry

    def simulate(self, session_id: str, sent: Sequence[Message], full: Sequence[Message],
                 tools: int = 0, seen: Sequence[Message] = ()) -> Simulated:  # fmt: skip
        """Simulate one request of the session (tokenizes: run it off the event loop)."""
        entry = self._get(session_id)
        with self._lock:
            simulation = entry.simulation = entry.simulation or Simulation()
        use = simulation.request(sent, full, tools, seen)
        if not self.holds(session_id):  # checked after keeping it: a drop in between has called `forget`
            self.forget(session_id)
        return use

    def forget(self, session_id: str) -> None:
        """Drop the session's simulation (the session cache dropped the session); its counts stay."""
        with self._lock:
            entry = self._sessions.get(session_id)
            if entry is not None:
                entry.simulation = None

    def record(self, session_id: str, use: CacheUse) -> float:
        """Record a forwarded request, simulated here or in a weaving process; returns its cached share."""
        entry = self._get(session_id)
        entry.requests += 1
        entry.tokens += use.tokens
        entry.cached_prefix_tokens += use.cached["anthropic"]
        return use.cached["anthropic"] / use.tokens if use.tokens else 0.0

    def reported(self, session_id: str, usage: Usage) -> None:
        """Add the provider's cached-token count of an answer that reported its usage."""
        entry = self._get(session_id)
        entry.provider_reports += 1
        entry.provider_cached_tokens += usage.cache_read

    def summary(self, session_id: str) -> dict[str, Any] | None:
        with self._lock:
            entry = self._sessions.get(session_id)
        return entry.summary() if entry is not None else None
