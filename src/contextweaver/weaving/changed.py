"""The files the agent changed, as the working-state note names them, kept as each step is added.

The note names every changed file at every weave, and the files grow with the run: so the record is
kept per step (each spelling looked up by its file name, not by a pass over every path), and the
tokens of each file's entries are counted once, when its change is recorded, and summed by recency
(a Fenwick tree over the order of change), so what a form of the files line costs is known without
its text: O(log files) per form. Only the chosen form's text is written.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from itertools import islice

from contextweaver.nodes.views import SpellingIndex
from contextweaver.records import Node
from contextweaver.tokens import count_text


@dataclass(frozen=True)
class Change:
    """A file's last change: the step, and how it left the file ("deleted", "reverted" or "")."""

    path: str
    step: int
    how: str

    @cached_property
    def bare(self) -> str:
        return self.path + (f" ({self.how})" if self.how else "")

    @cached_property
    def dated(self) -> str:
        return f"{self.path} ({self.how + ', ' if self.how else ''}step {self.step})"


def item_tokens(text: str) -> int:
    """An item's tokens in a list `a, b, c` as the tokenizer splits it (at a letter after a space, at a run
    of punctuation): the item with the space before it and the comma after it. Summed, with the list's
    last comma taken off (`comma`), they are the list's tokens, but where a text is split to be encoded
    in pieces (`tokens.encode`: lines of thousands of files)."""
    return count_text(f" {text},")


def comma(text: str) -> int:
    """The tokens the comma after `text` adds (none when it joins a bracket before it)."""
    return item_tokens(text) - count_text(" " + text)


class ChangedFiles:
    """Edited, created, deleted or reverted paths as the agent wrote them, each with its last change."""

    def __init__(self) -> None:
        self._last: dict[str, Change] = {}
        """The most recently changed last (the order the note names them in, reversed)."""
        self._spellings = SpellingIndex()
        """Every path ever changed, the first changed first: a revert is said under the spelling of the
        first change it matches."""
        self._slot: dict[str, int] = {}
        self._count = Fenwick()
        self._bare = Fenwick()
        self._dated: dict[str, int] = {}

    @classmethod
    def of(cls, nodes: Iterable[Node]) -> ChangedFiles:
        changed = cls()
        for node in nodes:
            changed.record(node)
        return changed

    def record(self, node: Node) -> None:
        """The changes of one step (the root's are not the agent's)."""
        facts = node.facts
        if node.index == 0 or not (facts.edited_files or facts.deleted_files or facts.reverted_files):
            return
        how_now: dict[str, str] = {}
        for how, paths in (("", facts.edited_files), ("deleted", facts.deleted_files)):
            for path in paths:
                self._spellings.add(path)
                how_now[path] = how
        for path in facts.reverted_files:  # under the spelling of the change it undoes
            known = next(iter(self._spellings.spellings(path)), path)
            self._spellings.add(known)
            how_now[known] = "reverted"
        for path in sorted(how_now, reverse=True):  # one step's files by path, once reversed
            self._put(Change(path, node.index, how_now[path]))

    def _put(self, change: Change) -> None:
        old = self._slot.get(change.path)
        if old is not None:
            self._count.add(old, -1)
            self._bare.add(old, -self._bare.at(old))
        self._last.pop(change.path, None)
        self._last[change.path] = change
        self._slot[change.path] = len(self._count)
        self._count.append(1)
        self._bare.append(item_tokens(change.bare))
        self._dated[change.path] = item_tokens(change.dated)

    def __len__(self) -> int:
        return len(self._last)

    def oldest(self) -> Change:
        return next(iter(self._last.values()))

    def newest(self, n: int | None = None) -> Iterator[Change]:
        """The `n` (None: all) most recently changed, the most recent first (one step's by path)."""
        return islice(reversed(self._last.values()), n)

    def bare_tokens(self, n: int) -> int:
        """Summed `item_tokens` of the `n` most recent files' bare entries."""
        older = self._count.last_at_most(len(self._last) - n)
        return self._bare.total - self._bare.prefix(older)

    def dated_tokens(self, n: int) -> int:
        """Summed `item_tokens` of the `n` most recent files' dated entries (n is small)."""
        return sum(self._dated[change.path] for change in self.newest(n))


class Fenwick:
    """Prefix sums of a growing list of ints, each update and sum O(log n)."""

    def __init__(self) -> None:
        self._tree = [0]
        self._values: list[int] = []
        self.total = 0

    def __len__(self) -> int:
        return len(self._values)

    def at(self, position: int) -> int:
        return self._values[position]

    def append(self, value: int) -> None:
        i = len(self._tree)  # the new value's 1-based index; its node sums (i - lowbit(i), i]
        below = i - (i & -i)
        self._tree.append(value + self.prefix(i - 1) - self.prefix(below))
        self._values.append(value)
        self.total += value

    def add(self, position: int, delta: int) -> None:
        self._values[position] += delta
        self.total += delta
        i = position + 1
        while i < len(self._tree):
            self._tree[i] += delta
            i += i & -i

    def prefix(self, n: int) -> int:
        """The sum of the first `n` values."""
        total = 0
        while n > 0:
            total += self._tree[n]
            n -= n & -n
        return total

    def last_at_most(self, target: int) -> int:
        """The largest n whose prefix sum is at most `target` (values not negative)."""
        n, step = 0, 1 << (len(self._tree) - 1).bit_length()
        while step:
            if n + step < len(self._tree) and self._tree[n + step] <= target:
                n += step
                target -= self._tree[n]
            step >>= 1
        return n
