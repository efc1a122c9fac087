"""Per session: how much of each forwarded request a provider's prompt cache could serve, and how much
the upstream says it did serve (`usage` fields), kept in memory for the session's API view.

The simulated share comes from the session's simulation (sessions/simulation.py: the request as
forwarded and as the agent sent it, whole), run where the session is woven. The provider's own
counts are read by upstream/usage.py.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from contextweaver.prompt_cache import PRICES, CachePrices, CacheUse
from contextweaver.records import Message
from contextweaver.serve.sessions.simulation import Simulated, Simulation
from contextweaver.serve.upstream.usage import Usage

PROVIDER = {"anthropic": "anthropic"}
"""The prices a wire's answers are billed at (every other wire: OpenAI's)."""


def prices_of(wire: str) -> CachePrices:
    return PRICES[PROVIDER.get(wire, "openai")]


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
