"""What one strategy's successive contexts hold, updated by what changed from one context to the next.

A replay asks at every step which evidence items the context holds, and how many of its tokens form a
common prefix with the previous context. Searching and counting the whole context each time costs
O(history) per step. A context mostly extends the previous one, so `ContextTrack` keeps, per message
of the last context, the items its text holds (one Aho-Corasick pass when the message enters) and its
tokens, plus a count per item of the messages holding it; a step then reads only the messages that are
new where they stand (a few replaced in place and the ones appended, else the rest after the prefix it
shares with the last context), and finds those places with comparisons done in C.
The answers equal `found_in` and `common_prefix_tokens`:
`messages_to_text` joins messages with a blank line, so an item without a line break occurs in the
joined text iff it occurs in one message's part; an item with one is searched in the joined text.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from itertools import compress, islice
from operator import itemgetter

from contextweaver.eval.evidence import finder
from contextweaver.prompt_cache import TokenCounts, common_prefix
from contextweaver.records import Message, message_text, messages_to_text


class ContextTrack:
    """One strategy's contexts, one `update` per step; `items` are every item the replay will ask for."""

    def __init__(self, items: Iterable[str], tokens: Callable[[Message], int] | None = None) -> None:
        self._words = frozenset(i for i in items if i and "\n" not in i)
        self._find = finder(set(self._words))
        self._tokens = tokens or TokenCounts().of
        self._messages: list[Message] = []
        self._held: list[frozenset[str]] = []
        """Per message of the context: the tracked items its text holds."""
        self._sizes: list[int] = []
        """Per message of the context: its tokens."""
        self._first = True
        self._shared: int | None = None
        self._counts: Counter[str] = Counter()

    def update(self, messages: Sequence[Message]) -> None:
        """Move to the next context, reading only the messages that are not where they were."""
        messages = messages if isinstance(messages, list) else list(messages)
        same = common_prefix(self._messages, messages)
        self._shared = None if self._first else same
        self._first = False
        changed = _sparse_changes(self._messages, messages, same)
        if changed is None:
            self._replace_rest(messages, same)
        else:
            self._replace_places(messages, changed)
        self._messages = messages

    @property
    def shared_tokens(self) -> int | None:
        """Tokens of the leading messages the context shares with the previous one (None at the first)."""
        return None if self._shared is None else sum(islice(self._sizes, self._shared))

    def _replace_places(self, messages: list[Message], changed: list[int]) -> None:
        """A few messages replaced in place, and messages added or removed at the end."""
        old, end = self._messages, len(messages)
        gone = zip(self._held[end:], self._sizes[end:], strict=True)
        known = {id(old[i]): (self._held[i], self._sizes[i]) for i in changed}
        known.update(zip(map(id, old[end:]), gone, strict=True))
        for held in self._held[end:]:
            self._counts.subtract(held)
        del self._held[end:], self._sizes[end:]
        for i in changed:
            self._counts.subtract(self._held[i])
            self._held[i], self._sizes[i] = known.get(id(messages[i])) or self._read(messages[i])
            self._counts.update(self._held[i])
        for message in messages[len(old) :]:
            held, size = known.get(id(message)) or self._read(message)
            self._held.append(held)
            self._sizes.append(size)
            self._counts.update(held)

    def _replace_rest(self, messages: list[Message], same: int) -> None:
        """Everything after the shared prefix may have moved: its bookkeeping runs in C (maps over ids),
        only messages that were not in the last context's rest are read."""
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
        self._sizes[same:] = map(itemgetter(1), rest)

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


SPARSE = 32
"""More changed places than this and the rest of the context is taken as changed."""


def _sparse_changes(old: list[Message], new: list[Message], first: int) -> list[int] | None:
    """The places below both lengths where `new` differs from `old` (from `first`, the first one), when
    there are at most SPARSE: each run of equal messages between them is skipped in one C comparison."""
    end = min(len(old), len(new))
    changed: list[int] = []
    place = first
    while place < end:
        if len(changed) == SPARSE:
            return None
        changed.append(place)
        place += 1
        if place < end:
            place += common_prefix(old[place:end], new[place:end])
    return changed
