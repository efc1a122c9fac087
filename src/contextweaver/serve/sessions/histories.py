"""A request's history sent to its weaving process as the change from the previous request's.

An agent resends its whole conversation with every call; pickling it to the weaving process costs
more than parsing it. Both sides keep the last history of each conversation (by lock key, bounded
by count and bytes), under a number: the proxy sends that number, how many leading messages are
unchanged and the new ones. A weaving process that no longer holds that history (restarted,
evicted) raises StaleHistory, and the proxy sends the whole history again.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from dataclasses import dataclass

from contextweaver.errors import ContextWeaverError
from contextweaver.records import Message
from contextweaver.serve.wires.conversation import Conversation


class StaleHistory(ContextWeaverError, LookupError):
    """The weaving process does not hold the history a delta extends: send the whole one."""


@dataclass
class Delta:
    key: str
    number: int
    """The number the history this delta makes is kept under, on both sides."""
    base: int | None
    """The number of the history it extends (None: `tail` is the whole history)."""
    keep: int
    """Leading messages of that history the request resends unchanged."""
    tail: list[Message]
    size: int
    """The request body's length in bytes: what keeping this history is charged."""
    root: list[Message]
    format: str
    reserved: int = 0

    def conversation(self, messages: list[Message]) -> Conversation:
        conversation = Conversation(root=self.root, format=self.format, messages=messages)
        conversation.reserved = self.reserved
        return conversation


class Histories:
    """The last history of each conversation, least recently used dropped first."""

    def __init__(self, max_keys: int = 256, max_bytes: int = 64 * 1024 * 1024) -> None:
        self.max_keys = max_keys
        self.max_bytes = max_bytes
        self._kept: OrderedDict[str, tuple[int, list[Message], int]] = OrderedDict()
        self._bytes = 0
        self._numbers = itertools.count(1)

    def delta(self, key: str, conversation: Conversation, size: int, *, whole: bool = False) -> Delta:
        """The request as a change from the kept history (the proxy's side)."""
        messages = conversation.messages or []
        kept = None if whole else self._kept.get(key)
        number = next(self._numbers)
        root, fmt = conversation.root, conversation.format
        if kept is not None:
            base, before, _ = kept
            if len(messages) >= len(before) and messages[: len(before)] == before:
                return Delta(key, number, base, len(before), messages[len(before) :], size, root, fmt,
                             conversation.reserved)  # fmt: skip
        return Delta(key, number, None, 0, messages, size, root, fmt, conversation.reserved)

    def apply(self, delta: Delta) -> list[Message]:
        """The whole history a delta stands for, kept for the next one (the weaving process's side)."""
        if delta.base is None:
            messages = delta.tail
        else:
            kept = self._kept.get(delta.key)
            if kept is None or kept[0] != delta.base:
                raise StaleHistory(f"history {delta.base} of {delta.key[:24]} is not kept here")
            messages = kept[1][: delta.keep] + delta.tail
        self.keep(delta, messages)
        return messages

    def keep(self, delta: Delta, messages: list[Message]) -> None:
        old = self._kept.pop(delta.key, None)
        if old is not None:
            self._bytes -= old[2]
        self._kept[delta.key] = (delta.number, messages, delta.size)
        self._bytes += delta.size
        while len(self._kept) > 1 and (len(self._kept) > self.max_keys or self._bytes > self.max_bytes):
            _, (_, _, size) = self._kept.popitem(last=False)
            self._bytes -= size
