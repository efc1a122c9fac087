"""A wire's history converted to chat messages once: a resent prefix is not converted again.

An agent resends its whole conversation with every call, in its own wire format (Anthropic
messages, Responses items). The last conversion of each conversation is kept (by its first
message, bounded by count and messages); a request that resends the same leading messages (equal
by value) reuses their chat messages and converts only what follows. A conversion restarts at a
cut: a wire position where it may start afresh (a chat message's first item).
"""

from __future__ import annotations

import bisect
import hashlib
import json
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from contextweaver.records import Message


@dataclass
class Converted:
    raw: list[Any]
    """The wire's messages (or items), as the request sent them."""
    chat: list[Message]
    cuts: list[int]
    """Wire positions where a conversion may restart, ascending."""
    chat_cuts: list[int]
    """The chat position of each cut."""
    notes: list[Any]
    """What the wire records of each of its messages."""
    reused: int = 0
    """Leading chat messages taken from the previous conversion (checked then)."""


Convert = Callable[[list[Any], int, Any], tuple[list[Message], list[int], list[Any]]]
"""(messages, start, the note of message start-1 or None) -> the chat messages of messages[start:],
the wire position of each one's first message (absolute), and a note per message from start on."""


def shared_prefix(before: list[Any], now: list[Any]) -> int:
    """How many leading messages two lists share (equal by value). An agent's breakpoints and its
    pending turn change only the last few messages: the rest is compared at once, then those."""
    count = min(len(before), len(now))
    for tail in (4, 64):
        if count - tail > 0 and now[: count - tail] == before[: count - tail]:
            count -= tail
            break
    else:
        count = 0
    while count < min(len(before), len(now)) and now[count] == before[count]:
        count += 1
    return count


class Conversions:
    """The last conversion of each conversation, least recently used dropped first."""

    def __init__(self, convert: Convert, max_keys: int = 64, max_messages: int = 400_000) -> None:
        self.convert = convert
        self.max_keys = max_keys
        self.max_messages = max_messages
        self._kept: OrderedDict[str, Converted] = OrderedDict()

    def __call__(self, raw: list[Any]) -> Converted:
        """The conversion of a non-empty list of wire messages (raises what `convert` raises)."""
        key = hashlib.sha256(json.dumps(raw[0], sort_keys=True, default=str).encode()).hexdigest()
        old = self._kept.get(key)
        start = at = chat_at = 0
        if old is not None:
            at = bisect.bisect_left(old.cuts, shared_prefix(old.raw, raw)) - 1
            if at >= 0:  # the first chat message of the last wire message shared
                at = bisect.bisect_left(old.cuts, old.cuts[at])
                start, chat_at = old.cuts[at], old.chat_cuts[at]
            at = max(at, 0)
        chat, firsts, notes = self.convert(raw, start, old.notes[start - 1] if old and start else None)
        if old is not None and start:
            made = Converted(raw, old.chat[:chat_at] + chat, old.cuts[:at] + firsts,
                             old.chat_cuts[:at] + [chat_at + i for i in range(len(chat))], old.notes[:start] + notes, chat_at)  # fmt: skip
        else:
            made = Converted(raw, chat, firsts, list(range(len(chat))), notes)
        self._kept.pop(key, None)
        self._kept[key] = made
        while len(self._kept) > 1 and (
            len(self._kept) > self.max_keys
            or sum(len(c.raw) for c in self._kept.values()) > self.max_messages
        ):
            self._kept.popitem(last=False)
        return made
