"""Next-step evidence recall (docs/evaluation.md, metric 2): was what the next action used in the context?"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from contextweaver.formats.base import Trajectory
from contextweaver.nodes.facts import is_code_like
from contextweaver.records import Message, message_text, messages_to_text

_WORD = re.compile(r"[A-Za-z0-9_./-]*[A-Za-z0-9_]")
_NUMBER = re.compile(r"(?<![\w.])\d{2,}(?![\w])")
_QUOTED = re.compile(r"""'([^'\n]{4,})'|"([^"\n]{4,})\"""")


def evidence_items(text: str) -> set[str]:
    """Code-like tokens, numbers of 2+ digits, quoted strings of 4+ characters."""
    items = {w for w in (m.group().strip("./-") for m in _WORD.finditer(text)) if is_code_like(w)}
    items.update(_NUMBER.findall(text))
    items.update(a or b for a, b in _QUOTED.findall(text))
    return items


@dataclass(frozen=True)
class StepEvidence:
    """The items step `index` (the next action) needed from earlier observations."""

    index: int
    items: frozenset[str]


def history_evidence(trajectory: Trajectory) -> dict[int, frozenset[str]]:
    """docs/evaluation.md's history evidence by next step index (see `next_step_evidence`)."""
    return {e.index: e.items for e in next_step_evidence(trajectory, history=True)}


def next_step_evidence(trajectory: Trajectory, history: bool = False) -> list[StepEvidence]:
    """For each step k+1 >= 2: items of its thought/action found in an earlier observation only.

    Items also in the system prompt, the task or an earlier thought/action are dropped (those are
    always in every context), and so are items found in more than half of the earlier observations.
    `history=True` gives history evidence: items said in an earlier thought or action count too (a
    budget may drop old steps whole, which observation evidence cannot see).
    """
    steps = trajectory.steps
    wanted = [evidence_items(f"{s.thought}\n{s.action}") for s in steps[1:]]
    earlier = EarlierText(trajectory, set().union(*wanted))
    return [
        StepEvidence(nxt + 1, frozenset(earlier.only_in_observations(items, nxt, history)))
        for nxt, items in enumerate(wanted, start=1)
    ]


class EarlierText:
    """Where given items occur in a trajectory's texts, found in one pass over the text.

    Asking, for every step, which of its items only earlier observations hold then costs the text's
    length once (plus a lookup per item), not the history's length at every step.
    """

    def __init__(self, trajectory: Trajectory, items: Iterable[str]) -> None:
        words = {i for i in items if i}
        find = finder(words)
        self.always = f"{trajectory.system}\n{trajectory.task}"
        said = "\n".join(f"{s.thought}\n{s.action}" for s in trajectory.steps)
        self._said_ends = list(
            itertools.accumulate(len(s.thought) + len(s.action) + 2 for s in trajectory.steps)
        )
        self._first_said: dict[str, int] = {}
        """Item -> end offset (exclusive) of its first occurrence in the joined thoughts and actions."""
        for end, word in find(said):
            self._first_said.setdefault(word, end + 1)
        self._observed: dict[str, list[int]] = {}
        """Item -> the (0-based) steps whose observation holds it, in order."""
        for position, step in enumerate(trajectory.steps):
            for word in {word for _, word in find(step.observation)}:
                self._observed.setdefault(word, []).append(position)

    def only_in_observations(self, items: Iterable[str], nxt: int, history: bool = False) -> set[str]:
        """The items that only observations of steps before index `nxt` (0-based) could supply: not in the
        system prompt, the task or an earlier thought/action, and not in more than half of those observations.
        With `history`, an item an earlier thought or action holds counts too (history evidence)."""
        said_end = self._said_ends[nxt - 1] - 1 if nxt else 0  # the joined text of steps[:nxt]
        kept = set()
        for item in items:
            if item in self.always:
                continue
            said = self._first_said.get(item, said_end + 1) <= said_end
            if said and not history:
                continue
            seen = bisect.bisect_left(self._observed.get(item, ()), nxt)
            if (seen or said) and seen <= nxt / 2:
                kept.add(item)
        return kept

    def held_before(self, item: str, nxt: int) -> bool:
        """Whether the root or a step before index `nxt` (0-based) holds `item` anywhere: else no context
        for step `nxt` can hold it."""
        said_end = self._said_ends[nxt - 1] - 1 if nxt else 0
        return (
            item in self.always
            or self._first_said.get(item, said_end + 1) <= said_end
            or bool(self.sources(item, nxt))
        )

    def sources(self, item: str, nxt: int) -> list[int]:
        """The (0-based) steps before index `nxt` whose observation holds `item`, in order."""
        found = self._observed.get(item, [])
        return found[: bisect.bisect_left(found, nxt)]


def finder(words: set[str]) -> Callable[[str], Iterable[tuple[int, str]]]:
    """(end index, word) of occurrences of `words` in a text, at least each word's first one.

    One Aho-Corasick pass when `pyahocorasick` is installed (the `eval` extra), else one search per word.
    """
    if not words:
        return lambda text: ()
    try:
        import ahocorasick
    except ImportError:
        return lambda text: [(at + len(w) - 1, w) for w in words if (at := text.find(w)) >= 0]
    automaton = ahocorasick.Automaton()
    for word in words:
        automaton.add_word(word, word)
    automaton.make_automaton()
    iterate: Callable[[str], Iterable[tuple[int, str]]] = automaton.iter
    return iterate


def covered(items: frozenset[str], context_text: str) -> int:
    return sum(1 for item in items if item in context_text)


def covered_in(items: frozenset[str], messages: Sequence[Message]) -> int:
    """`covered(items, messages_to_text(messages))` without building the whole text."""
    return len(found_in(items, messages))


def found_in(items: frozenset[str], messages: Sequence[Message]) -> set[str]:
    """The items that occur in `messages_to_text(messages)`, found without building the whole text.

    An item without a line break occurs in that text iff it occurs in one message's part of it, so the
    messages are searched newest first (evidence is mostly recent) until every item is found.
    """
    if any("\n" in item for item in items):
        text = messages_to_text(messages)
        return {item for item in items if item in text}
    left = set(items)
    for message in reversed(messages):
        if not left:
            break
        text = message_text(message)
        left = {item for item in left if item not in text}
    return set(items) - left
