"""A session's two prefix caches: how much of each request a provider's prompt cache could serve.

The share comes from `contextweaver.prompt_cache.PrefixCache` (the longest message prefix shared with
an earlier request of the session). A second simulator sees each request's history as the agent sent
it, whole: what passing it through would have cost (`Simulated`), the counterfactual the proxy's
measured bill is compared with (ledger/cache_ledger.py). It runs where the session is woven (a
weaving process keeps its sessions' simulations beside their histories).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

from contextweaver.prompt_cache import CachePrices, CacheUse, PrefixCache
from contextweaver.records import Message
from contextweaver.serve.wires.conversation import Conversation


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
