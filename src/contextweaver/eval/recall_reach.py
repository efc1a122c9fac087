"""One recall away: which steps a context names so that the agent can read them again in full.

A context with recall on names each step it shortened where it stands (`, #N` in a placeholder, a
trim or an excerpt marker) and the steps it dropped in the note's omitted line, with the way back given
once (the note's recall line). Read from the context's text, as the agent reads it: a step counts only
when the context both names it and says how to recall it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

from contextweaver.formats.base import Trajectory
from contextweaver.nodes.extract import extraction_of
from contextweaver.records import Message, WovenContext, message_text
from contextweaver.tokens import count_text
from contextweaver.weaving.working_state import RECALL

IN_PLACE = re.compile(r"(?:lines omitted|output omitted|cut), #(\d+)[)\]]")
"""A placeholder's, a trim's or an excerpt marker's handle."""
OMITTED = re.compile(r"steps omitted: ((?:\d+(?:-\d+)?)(?:, \d+(?:-\d+)?)*) \(\d+ of \d+\)")
BETWEEN = re.compile(r"steps omitted: \d+ of \d+, between (\d+) and (\d+)")
RECALL_START = RECALL.split("{", 1)[0]


Marks = tuple[tuple[str, ...], tuple[str, ...], tuple[tuple[str, str], ...], str | None]
"""One message's marks: in-place handles, omitted ranges, omitted spans, its recall line (if any)."""


def named_steps(
    messages: Sequence[Message], memo: dict[int, tuple[Message, Marks]] | None = None
) -> tuple[frozenset[int], int]:
    """The steps the context names with the way to recall them, and the tokens those marks take (each
    in-place handle and the recall line; the note's omitted line was there before recall). No mark spans
    two messages, so each message is read alone; with `memo` (kept by the caller from one context to the
    next, holding only the last one's), a message read for the last context is not read again."""
    marks = _read_marks(messages, memo)
    line = next((m[3] for m in marks if m[3] is not None), None)
    if line is None:
        return frozenset(), 0
    handles = [n for m in marks for n in m[0]]
    steps = _named(marks, handles)
    cost = count_text(line) + 1 + sum(_handle_tokens(n) for n in handles)
    return frozenset(steps), cost


def _read_marks(messages: Sequence[Message], memo: dict[int, tuple[Message, Marks]] | None) -> list[Marks]:
    """Each message's marks, read again only for a message the memo does not hold; the memo then holds
    these messages alone."""
    marks: list[Marks] = []
    seen: dict[int, tuple[Message, Marks]] = {}
    for message in messages:
        known = memo.get(id(message)) if memo is not None else None
        found = known[1] if known is not None and known[0] is message else _marks(message_text(message))
        seen[id(message)] = (message, found)
        marks.append(found)
    if memo is not None:
        memo.clear()
        memo.update(seen)
    return marks


def _named(marks: Sequence[Marks], handles: Sequence[str]) -> set[int]:
    """The step numbers the marks name: in-place handles, omitted ranges (`3-5, 8`), omitted spans."""
    steps = {int(n) for n in handles}
    for ranges in (r for m in marks for r in m[1]):
        for part in ranges.split(", "):
            first, _, last = part.partition("-")
            steps.update(range(int(first), int(last or first) + 1))
    for first, last in (b for m in marks for b in m[2]):
        steps.update(range(int(first), int(last) + 1))
    return steps


def _marks(text: str) -> Marks:
    start = text.find(RECALL_START)
    line = None if start < 0 else text[start : text.find("\n", start) if "\n" in text[start:] else len(text)]
    return tuple(IN_PLACE.findall(text)), tuple(OMITTED.findall(text)), tuple(BETWEEN.findall(text)), line


@lru_cache(maxsize=4096)
def _handle_tokens(step: str) -> int:
    return count_text(f", #{step}")


def reach_record(
    context: WovenContext,
    needed: frozenset[str],
    held: set[str],
    sources: Mapping[str, Sequence[int]],
    trajectory: Trajectory,
    memo: dict[int, tuple[Message, Marks]] | None = None,
) -> dict[str, int]:
    """A step's record of next-step evidence in the context or one recall away (`reach_*`), the marks'
    tokens in a context that cut (`marker_tokens`), and the steps a recall would read for the rest
    (`recalls`) with their tokens in full (`recall_tokens`: what the answers hold, besides a line each)."""
    record = {"reach_items": len(needed), "reach_covered": len(held)}
    missing = needed - held
    cut = context.tokens < context.full_history_tokens
    if not missing and not cut:
        return record
    named, cost = named_steps(context.messages, memo)
    if cut:
        record["marker_tokens"] = cost
    recalled = set()
    for item in missing:
        found = [step for step in sources.get(item, ()) if step in named]
        if found:
            record["reach_covered"] += 1
            recalled.add(found[-1])
    if recalled:
        record["recalls"] = len(recalled)
        record["recall_tokens"] = sum(extraction_of(trajectory.steps[s - 1]).full_tokens for s in recalled)
    return record
