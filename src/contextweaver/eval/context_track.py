"""What one strategy's successive contexts hold, updated by what changed from one context to the next.

A replay asks at every step which evidence items the context holds, and how many of its tokens form a
common prefix with the previous context. Searching and counting the whole context each time costs
O(history) per step. A context mostly extends the previous one, so `ContextTrack` keeps, per message
of the last context, the items its text holds (one Aho-Corasick pass when the message enters) and its
tokens, plus a count per item of the messages holding it; a step then reads only the messages after the
prefix it shares with the last context. The answers equal `found_in` and `common_prefix_tokens`:
`messages_to_text` joins messages with a blank line, so an item without a line break occurs in the
joined text iff it occurs in one message's part; an item with one is searched in the joined text.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from itertools import accumulate, compress
from operator import itemgetter

from contextweaver.eval.evidence import finder
from contextweaver.eval.metrics import MessageTokens
from contextweaver.prompt_cache import common_prefix
from contextweaver.render import message_text, messages_to_text
from contextweaver.types import Message


class ContextTrack:
    """One strategy's contexts, one `update` per step; `items` are every item the replay will ask for."""

    def __init__(self, items: Iterable[str], tokens: Callable[[Message], int] | None = None) -> None:
        self._words = frozenset(i for i in items if i and "\n" not in i)
        self._find = finder(set(self._words))
        self._tokens = tokens or MessageTokens()
        self._messages: list[Message] = []
        self._held: list[frozenset[str]] = []
        """Per message of the context: the tracked items its text holds."""
        self._sizes: list[int] = []
        """Per message of the context: its tokens."""
        self._totals: list[int] = []
        """Per message of the context: the tokens up to and including it."""
        self._first = True
        self._counts: Counter[str] = Counter()
        self.shared_tokens: int | None = None
        """Tokens of the leading messages the context shares with the previous one (None at the first)."""

    def update(self, messages: Sequence[Message]) -> None:
        """Move to the next context: only messages after the shared prefix that were not in the last
        context's rest are read; the bookkeeping of the rest runs in C (maps over ids)."""
        messages = messages if isinstance(messages, list) else list(messages)
        same = common_prefix(self._messages, messages)
        old, new = self._messages[same:], messages[same:]
        old_ids, new_ids = list(map(id, old)), list(map(id, new))
        known = dict(zip(old_ids, zip(self._held[same:], self._sizes[same:], strict=True), strict=True))
        distinct = set(new_ids)
        if len(known) == len(old_ids) and len(distinct) == len(new_ids):  # each object in one place
            for key in known.keys() - distinct:
                self._counts.subtract(known[key][0])
            for message in compress(new, map((distinct - known.keys()).__contains__, new_ids)):
                known[id(message)] = self._read(message)
                self._counts.update(known[id(message)][0])
        else:  # an object in two places: count the rest again, place by place
            for held in self._held[same:]:
                self._counts.subtract(held)
            for message in new:
                if id(message) not in known:
                    known[id(message)] = self._read(message)
                self._counts.update(known[id(message)][0])
        rest = list(map(known.__getitem__, new_ids))
        self._held[same:] = map(itemgetter(0), rest)
        before = self._totals[same - 1] if same else 0
        self._sizes[same:] = map(itemgetter(1), rest)
        self._totals[same:] = accumulate(self._sizes[same:], initial=before)
        del self._totals[same]  # accumulate's initial value
        self.shared_tokens = None if self._first else before
        self._first = False
        self._messages = messages

    def _read(self, message: Message) -> tuple[frozenset[str], int]:
        """The tracked items a message's text holds, and its tokens."""
        return frozenset(word for _, word in self._find(message_text(message))), self._tokens(message)

    def found(self, items: frozenset[str]) -> set[str]:
        """The items that occur in `messages_to_text` of the current context."""
        counts = self._counts
        found = {item for item in items if item in self._words and counts[item] > 0}
        others = [item for item in items if item not in self._words]
        if others:
            text = messages_to_text(self._messages)
            found.update(item for item in others if item in text)
        return found

    def covered(self, items: frozenset[str]) -> int:
        return len(self.found(items))
