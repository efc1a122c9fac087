"""Per session: how much of each forwarded request a provider's prompt cache could serve, and how much
the upstream says it did serve (`usage` fields), kept in memory for the session's API view.

The simulated share comes from `contextweaver.prompt_cache.PrefixCache` (the longest message prefix
shared with an earlier request of the session). The provider's own count is read from the answer's
`usage`: OpenAI's `prompt_tokens_details.cached_tokens` or Anthropic's `cache_read_input_tokens`,
in a JSON body or in the last usage event of a stream.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from contextweaver.prompt_cache import CacheUse, PrefixCache
from contextweaver.records import Message

_USAGE = re.compile(rb'"usage"\s*:\s*(\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\})')
"""A usage object (one level of nesting, as prompt_tokens_details) anywhere in a body or stream."""
TAIL_BYTES = 8192
"""The usage event closes a stream: only this much of its end is kept to find it."""


@dataclass
class SessionCache:
    requests: int = 0
    tokens: int = 0
    cached_prefix_tokens: int = 0
    """Simulated: tokens a prefix cache serves (Anthropic's rule: at least 1024 shared tokens)."""
    provider_reports: int = 0
    provider_cached_tokens: int = 0
    """Summed from the upstream's `usage`, over the answers that reported it."""
    simulator: PrefixCache = field(default_factory=PrefixCache, repr=False)

    def summary(self) -> dict[str, Any]:
        names = ("requests", "tokens", "cached_prefix_tokens", "provider_reports", "provider_cached_tokens")
        data: dict[str, Any] = {name: getattr(self, name) for name in names}
        data["cached_prefix_share"] = (
            round(self.cached_prefix_tokens / self.tokens, 4) if self.tokens else 0.0
        )
        return data


class CacheLedger:
    """Thread-safe, bounded (least recently used sessions are forgotten first)."""

    def __init__(self, max_sessions: int = 256) -> None:
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[str, SessionCache] = OrderedDict()
        self._lock = threading.Lock()

    def _get(self, session_id: str) -> SessionCache:
        with self._lock:
            entry = self._sessions.setdefault(session_id, SessionCache())
            self._sessions.move_to_end(session_id)
            while len(self._sessions) > self.max_sessions:
                self._sessions.popitem(last=False)
            return entry

    def request(self, session_id: str, messages: Sequence[Message]) -> float:
        """Record one forwarded request; returns the share of it a prefix cache could serve."""
        return self.record(session_id, self._get(session_id).simulator.request(messages))

    def record(self, session_id: str, use: CacheUse) -> float:
        """Record a request already simulated elsewhere (a weaving process); returns its cached share."""
        entry = self._get(session_id)
        entry.requests += 1
        entry.tokens += use.tokens
        entry.cached_prefix_tokens += use.cached["anthropic"]
        return use.cached["anthropic"] / use.tokens if use.tokens else 0.0

    def answer(self, session_id: str, body: bytes) -> None:
        """Add the provider's cached-token count when the answer reports one."""
        cached = provider_cached_tokens(body)
        if cached is not None:
            entry = self._get(session_id)
            entry.provider_reports += 1
            entry.provider_cached_tokens += cached

    def summary(self, session_id: str) -> dict[str, Any] | None:
        with self._lock:
            entry = self._sessions.get(session_id)
        return entry.summary() if entry is not None else None


def provider_cached_tokens(body: bytes) -> int | None:
    """Cached prompt tokens from the last `usage` object in an answer (JSON or SSE), None when absent."""
    for raw in reversed(_USAGE.findall(body[-TAIL_BYTES:] if len(body) > TAIL_BYTES else body)):
        try:
            usage = json.loads(raw)
        except ValueError:
            continue
        details = usage.get("prompt_tokens_details") or usage.get("input_tokens_details") or {}
        for value in (details.get("cached_tokens"), usage.get("cache_read_input_tokens")):
            if isinstance(value, int):
                return value
        return None
    return None
