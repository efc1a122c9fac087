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
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate, repeat
from typing import Any

from contextweaver.records import Message
from contextweaver.tokens import count_message

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

    Prefixes are chained hashes of message keys, token counts are memoized per distinct message. The
    seen prefixes form a tree, kept as branches of 8-byte hashes (`_Seen`): a request whose early
    messages changed adds a branch as long as its context, a replay of thousands of steps adds millions.
    The leading messages a request shares with the previous request are not read again (their
    prefixes are all seen), so a request costs O(the messages after them) plus one comparison in C: a
    replay that appends to its last context pays per new message. A message must not change once sent.
    """

    def __init__(
        self, prices: Sequence[CachePrices] = tuple(PRICES.values()), tokens: TokenCounts | None = None
    ) -> None:
        self.prices = tuple(prices)
        self._seen = _Seen()
        self._tokens = TokenCounts() if tokens is None else tokens
        """Tokens per distinct message; another cache of the same run may share it (`token_counts`)."""
        self._last: list[Message] = []
        self._keys: list[tuple[Any, ...]] = []
        self._hashes = array("q")
        """Per message of the last request: the chained hash of the prefix it ends."""
        self._totals = array("q")
        """Per message of the last request: the tokens up to and including it."""
        self._places: list[tuple[int, int]] = []
        """Per message of the last request: where its prefix is stored in `_seen`."""

    def request(self, messages: Sequence[Message]) -> CacheUse:
        messages = messages if isinstance(messages, list) else list(messages)
        keys, hashes, totals, places = self._keys, self._hashes, self._totals, self._places
        same = common_prefix(self._last, messages)
        known = dict(zip(map(id, self._last[same:]), keys[same:], strict=True))
        for kept in (keys, hashes, totals, places):  # the shared prefix stays in place, the rest goes
            del kept[same:]
        prefix = hashes[-1] if same else 0
        total = shared = totals[-1] if same else 0
        place = places[-1] if same else (-1, -1)
        position = same
        while position < len(messages):  # along seen prefixes, message by message
            message = messages[position]
            key = known.get(id(message)) or message_key(message)
            prefix = hash((prefix, key))
            total += self._count(message, key)
            keys.append(key)
            hashes.append(prefix)
            totals.append(total)
            position += 1
            found = self._seen.find(place, prefix)
            if found is None:  # unseen, and so is every later prefix of this request (they chain)
                place = self._seen.add(place, prefix)
                places.append(place)
                break
            place, shared = found, total
            places.append(place)
        rest = messages[position:]
        if rest:  # all unseen: stored in one go, at the end of the branch just grown
            rest_keys = [
                k or message_key(m) for k, m in zip(map(known.get, map(id, rest)), rest, strict=True)
            ]
            rest_hashes = array("q")
            for key in rest_keys:
                prefix = hash((prefix, key))
                rest_hashes.append(prefix)
            branch, offset = place
            self._seen.extend(branch, rest_hashes)
            keys += rest_keys
            hashes += rest_hashes
            totals += array("q", accumulate(map(self._count, rest, rest_keys), initial=total))[1:]
            total = totals[-1]
            places += zip(repeat(branch), range(offset + 1, offset + 1 + len(rest)))
        self._last = messages
        cached = {p.provider: p.cached(shared) for p in self.prices}
        billed = {p.provider: p.billed(total, cached[p.provider]) for p in self.prices}
        return CacheUse(total, shared, cached, billed)

    @property
    def token_counts(self) -> TokenCounts:
        return self._tokens

    def tokens(self, message: Message) -> int:
        """Tokens of a message, counted once per distinct recent message (a replay's other metrics share it)."""
        return self._tokens.of(message)

    def _count(self, message: Message, key: tuple[Any, ...]) -> int:
        return self._tokens.of(message, key)


class _Seen:
    """Every prefix hash seen, as a tree: branches of hashes (8 bytes each), each hanging off a prefix of
    an earlier branch; a branch's first hash is indexed. A prefix's child is the next hash of its branch
    or the first of another branch (a prefix was seen iff its parent was: the hashes are chained)."""

    def __init__(self) -> None:
        self._branches: list[array[int]] = []
        self._starts: dict[int, int] = {}

    def find(self, parent: tuple[int, int], prefix: int) -> tuple[int, int] | None:
        """Where `prefix`, a child of the prefix stored at `parent` ((-1, -1): the empty one), is stored."""
        branch, offset = parent
        if branch >= 0:
            chain = self._branches[branch]
            if offset + 1 < len(chain) and chain[offset + 1] == prefix:
                return branch, offset + 1
        start = self._starts.get(prefix)
        return None if start is None else (start, 0)

    def extend(self, branch: int, prefixes: array[int]) -> None:
        """Store unseen prefixes, each the child of the one before, after the end of `branch`."""
        self._branches[branch].extend(prefixes)

    def add(self, parent: tuple[int, int], prefix: int) -> tuple[int, int]:
        """Store unseen `prefix` after `parent`: on its branch when `parent` ends it, else a new branch."""
        branch, offset = parent
        if branch >= 0 and offset + 1 == len(self._branches[branch]):
            self._branches[branch].append(prefix)
            return branch, offset + 1
        self._branches.append(array("q", [prefix]))
        self._starts[prefix] = len(self._branches) - 1
        return len(self._branches) - 1, 0


def common_prefix(before: Sequence[Any], now: Sequence[Any]) -> int:
    """How many leading items `now` shares with `before` (equal values), compared in C: a context that
    extends the last one costs one pass that mostly compares pointers (the same message objects)."""
    before = before if isinstance(before, list) else list(before)
    now = now if isinstance(now, list) else list(now)
    n = min(len(before), len(now))
    if (before if n == len(before) else before[:n]) == (now if n == len(now) else now[:n]):
        return n
    low, high = 0, n  # before[:low] == now[:low], before[:high] != now[:high]
    while high - low > 1:
        middle = (low + high) // 2
        if before[low:middle] == now[low:middle]:
            low = middle
        else:
            high = middle
    return low


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


RECENT_MESSAGES = 4096
"""Distinct messages whose token counts `TokenCounts` keeps: several strategies' contexts of a few hundred."""


class TokenCounts:
    """Token counts per distinct message (`message_key`), the RECENT_MESSAGES last used kept: a context
    repeats most of the last one's messages. Keeping every count held every trimmed output and note ever
    woven (their keys hold the text): a 1 GB run's replay grew by ~130 KB a step."""

    def __init__(self, count: Callable[[Message], int] = count_message, size: int = RECENT_MESSAGES) -> None:
        self._count = count
        self._size = size
        self._counts: OrderedDict[tuple[Any, ...], int] = OrderedDict()

    def __len__(self) -> int:
        return len(self._counts)

    def of(self, message: Message, key: tuple[Any, ...] | None = None) -> int:
        """The message's tokens (`key`: its `message_key` when already made)."""
        key = message_key(message) if key is None else key
        counts = self._counts
        tokens = counts.get(key)
        if tokens is None:
            tokens = counts[key] = self._count(message)
            if len(counts) > self._size:
                counts.popitem(last=False)
        else:
            counts.move_to_end(key)
        return tokens


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
