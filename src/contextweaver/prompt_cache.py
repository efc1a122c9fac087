"""What a provider's prompt cache would serve and bill for a run's requests: prices and a prefix simulator.

Providers bill input tokens that extend a prefix they have seen recently at a fraction of the price.
The simulator models that as: cached tokens = the longest common prefix, in whole messages, with any
earlier request of the same run, counted only from the provider's minimum cacheable length.
Simplifications (documented, deliberate): every request is assumed to end with a cache breakpoint
(what agents that use caching do) and to arrive within the cache's lifetime (5 minutes or more);
a change inside a message ends the shared prefix at that message's start; OpenAI's best-effort
routing is assumed to hit. Token counts are o200k_base, the same as every other count here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from contextweaver.tokens import count_message
from contextweaver.types import Message

PRICES_TAKEN = "2026-11-30"
"""The day the multipliers below were read from the providers' pricing pages."""


@dataclass(frozen=True)
class CachePrices:
    """One provider's prompt-cache billing, as multiples of its base input price."""

    provider: str
    read: float
    """Tokens served from the cache."""
    write: float
    """Tokens written to the cache (the uncached rest of a cacheable request)."""
    min_prefix: int
    """Shortest prefix the provider caches at all."""
    increment: int
    """Cached lengths are multiples of this past `min_prefix` (1 = any length)."""
    source: str

    def cached(self, shared: int) -> int:
        """Tokens the provider serves from the cache when `shared` leading tokens match an earlier request."""
        if shared < self.min_prefix:
            return 0
        return self.min_prefix + (shared - self.min_prefix) // self.increment * self.increment

    def billed(self, total: int, cached: int) -> float:
        """Input billed in base-price tokens; a request too short to cache pays the plain price."""
        rest = total - cached
        return cached * self.read + rest * (self.write if total >= self.min_prefix else 1.0)


PRICES = {
    "anthropic": CachePrices(
        "anthropic",
        read=0.1,
        write=1.25,
        min_prefix=1024,
        increment=1,
        source="https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching (5-minute cache writes)",
    ),
    "openai": CachePrices(
        "openai",
        read=0.1,
        write=1.0,
        min_prefix=1024,
        increment=128,
        source="https://platform.openai.com/docs/guides/prompt-caching and https://openai.com/api/pricing",
    ),
}


@dataclass(frozen=True)
class CacheUse:
    """One request as the providers would bill it."""

    tokens: int
    shared: int
    """Leading tokens equal to an earlier request's (before any provider's minimum)."""
    cached: dict[str, int]
    billed: dict[str, float]


class PrefixCache:
    """The prompt cache of one run: remembers every prefix (whole messages) of the requests it saw.

    Each request costs O(its messages): prefixes are chained hashes of message keys, token counts are
    memoized per distinct message, so a context that repeats the last one is not re-counted. The
    leading messages a request shares with the previous one (equal dicts, usually the same strings)
    reuse that request's chained hashes and running totals, so an appended step costs O(new messages);
    a request's messages must not be changed in place after it was simulated.
    """

    def __init__(self, prices: Sequence[CachePrices] = tuple(PRICES.values())) -> None:
        self.prices = tuple(prices)
        self._seen: set[int] = set()
        self._tokens: dict[tuple[Any, ...], int] = {}
        self._last: list[tuple[Message, int, int]] = []
        """The previous request: each message with the chained hash and the token total through it."""

    def request(self, messages: Sequence[Message]) -> CacheUse:
        reused = 0
        for (before, _, _), message in zip(self._last, messages, strict=False):
            if before != message:
                break
            reused += 1
        # every prefix of the previous request is in _seen: the reused ones all match
        prefix, total = self._last[reused - 1][1:] if reused else (0, 0)
        shared = total
        matching = True
        last = self._last[:reused]
        for message in messages[reused:]:
            key = message_key(message)
            tokens = self._tokens.get(key)
            if tokens is None:
                tokens = self._tokens[key] = count_message(message)
            prefix = hash((prefix, key))
            total += tokens
            if matching and prefix in self._seen:
                shared = total
            else:
                matching = False
                self._seen.add(prefix)
            last.append((message, prefix, total))
        self._last = last
        cached = {p.provider: p.cached(shared) for p in self.prices}
        billed = {p.provider: p.billed(total, cached[p.provider]) for p in self.prices}
        return CacheUse(total, shared, cached, billed)


def message_key(message: Message) -> tuple[Any, ...]:
    """What makes two messages the same to a provider: role, content, tool calls, tool-call id."""
    content = message.get("content")
    if not isinstance(content, str):
        content = json.dumps(content, sort_keys=True, default=str)
    calls = message.get("tool_calls")
    return (
        message.get("role"),
        content,
        json.dumps(calls, sort_keys=True, default=str) if calls else "",
        message.get("tool_call_id", ""),
    )


@dataclass(frozen=True)
class RunCost:
    """A whole run's input as the providers would bill it, relative to the full history without a cache."""

    cache_share: float
    """Tokens served from the cache (Anthropic's rule) over all input tokens."""
    billed: dict[str, float]


class CostMeter:
    """`run_cost` request by request, keeping only the cache and running sums (for streaming replays)."""

    def __init__(self) -> None:
        self.cache = PrefixCache()
        self.tokens = self.cached = self.full = 0
        self.billed = dict.fromkeys(PRICES, 0.0)

    def add(self, messages: Sequence[Message], full_tokens: int) -> None:
        use = self.cache.request(messages)
        self.tokens, self.cached, self.full = (
            self.tokens + use.tokens,
            self.cached + use.cached["anthropic"],
            self.full + full_tokens,
        )
        for provider in self.billed:
            self.billed[provider] += use.billed[provider]

    def cost(self) -> RunCost:
        billed = {p: b / self.full if self.full else 0.0 for p, b in self.billed.items()}
        return RunCost(self.cached / self.tokens if self.tokens else 0.0, billed)


def run_cost(contexts: Iterable[tuple[Sequence[Message], int]]) -> RunCost:
    """`contexts`: each request's messages with the full history's tokens at that step, in order."""
    meter = CostMeter()
    for messages, full_tokens in contexts:
        meter.add(messages, full_tokens)
    return meter.cost()
