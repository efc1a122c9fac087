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
from contextweaver.records import Message, WovenContext, messages_to_text
from contextweaver.tokens import count_text
from contextweaver.weaving.working_state import RECALL

IN_PLACE = re.compile(r"(?:lines omitted|output omitted|cut), #(\d+)[)\]]")
"""A placeholder's, a trim's or an excerpt marker's handle."""
OMITTED = re.compile(r"steps omitted: ((?:\d+(?:-\d+)?)(?:, \d+(?:-\d+)?)*) \(\d+ of \d+\)")
BETWEEN = re.compile(r"steps omitted: \d+ of \d+, between (\d+) and (\d+)")
RECALL_START = RECALL.split("{", 1)[0]


def named_steps(messages: Sequence[Message]) -> tuple[frozenset[int], int]:
    """The steps the context names with the way to recall them, and the tokens those marks take (each
    in-place handle and the recall line; the note's omitted line was there before recall)."""
    text = messages_to_text(messages)
    start = text.find(RECALL_START)
    if start < 0:
        return frozenset(), 0
    line = text[start : text.find("\n", start) if "\n" in text[start:] else len(text)]
    handles = IN_PLACE.findall(text)
    steps = {int(n) for n in handles}
    for ranges in OMITTED.findall(text):
        for part in ranges.split(", "):
            first, _, last = part.partition("-")
            steps.update(range(int(first), int(last or first) + 1))
    for first, last in BETWEEN.findall(text):
        steps.update(range(int(first), int(last) + 1))
    cost = count_text(line) + 1 + sum(_handle_tokens(n) for n in handles)
    return frozenset(steps), cost


@lru_cache(maxsize=4096)
def _handle_tokens(step: str) -> int:
    return count_text(f", #{step}")


def reach_record(
    context: WovenContext,
    needed: frozenset[str],
    held: set[str],
    sources: Mapping[str, Sequence[int]],
    trajectory: Trajectory,
) -> dict[str, int]:
    """A step's record of next-step evidence in the context or one recall away (`reach_*`), the marks'
    tokens in a context that cut (`marker_tokens`), and the steps a recall would read for the rest
    (`recalls`) with their tokens in full (`recall_tokens`: what the answers hold, besides a line each)."""
    record = {"reach_items": len(needed), "reach_covered": len(held)}
    missing = needed - held
    cut = context.tokens < context.full_history_tokens
    if not missing and not cut:
        return record
    named, cost = named_steps(context.messages)
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
