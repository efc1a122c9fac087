"""Offers: the lines of one older output worth keeping, cut to a token cap, valued for the selection.

A scored line keeps the lines around it (`context` on each side) unless it stands alone (a definition
line of a file's outline); rows of passing tests around a hit are not kept. Lines are taken best score
first while they fit the cap, so an offer's value is the score it keeps.
"""

from __future__ import annotations

from dataclasses import dataclass

from contextweaver.weaving.excerpts import OutputLines


@dataclass(frozen=True)
class Recent:
    """What the last few steps are about: the words and files they said, and their parents."""

    words: set[str]
    files: set[str]
    parents: set[int]
    pages: tuple[tuple[str, int, int], ...] = ()
    """(path, first, last): the file line ranges the last few steps' views showed."""


@dataclass(frozen=True)
class Offer:
    index: int
    keep: frozenset[int]
    tokens: int
    value: float
    hits: tuple[str, ...]
    wider: Offer | None = None
    """The same output's lines under a bigger cap: taken instead when it fits (ranked as this one)."""
    paged: bool = False
    """It offers the lines numbered around a range recent views of its file showed (`pages.py`)."""


def cut_offer(
    index: int,
    lines: OutputLines,
    score: dict[int, float],
    alone: set[int],
    passing: frozenset[int],
    context: int,
    cap: int,
    bonus: float,
    hits: list[str],
) -> Offer | None:
    """The best-scored lines (and their neighbours) of one output within `cap` tokens, or None."""
    keep: set[int] = set()
    spent, value = 0, 0.0
    total, tokens = len(lines.lines), lines.tokens
    for n, points in sorted(score.items(), key=lambda item: (-item[1], item[0])):
        if n in alone:  # one line (an outline's are most of a long view's scored lines): no list to build
            if n not in keep:
                if spent + tokens[n] > cap:
                    continue
                keep.add(n)
                spent += tokens[n]
            value += points
            continue
        add = [
            i
            for i in range(max(0, n - context), min(total, n + context + 1))
            if i not in keep and (i == n or i not in passing)
        ]
        cost = sum([tokens[i] for i in add])
        if spent + cost > cap:
            continue
        keep.update(add)
        spent += cost
        value += points
    if not keep:
        return None
    return Offer(index, frozenset(keep), spent, value * bonus, tuple(hits))
