"""An output too big for the room left: part of the room to the lines nearest what recent steps mention, the rest
to its head and tail.

A head/tail trim keeps the start and end of a file view and cuts its middle, where the function the agent
opened the file for often is (a Java class of 140 lines beside a root that fills most of an 8k budget). Here
up to `MARKED_SHARE` of the room goes to the lines nearest those that hold words the recent steps said,
nearest first, and the rest to the head and the tail as a head/tail trim would keep them; every cut run of
lines is one marker, as in any excerpt.
"""

from __future__ import annotations

from dataclasses import dataclass

from contextweaver.records import Node
from contextweaver.weaving.excerpts import MARKER_TOKENS, Excerpt, OutputLines, build_excerpt

MARKED_SHARE = 0.5
"""The most of the room the lines nearest the marked ones take; the rest keeps the head and the tail, which
held the next step's evidence as often in outputs whose marks were scattered (a whole module printed, many
names hit once). Chosen on the train splits (docs/TUNING.md)."""
TRIES = 4
"""Excerpts built at most, each aimed by what the last one missed the room by (line tokens are estimates)."""
CLOSE = 32
"""Tokens under the room at which an excerpt is taken without another try."""


@dataclass(frozen=True)
class Aim:
    """Where to cut an output that must shrink: its lines, and the lines that hold what recent steps mention."""

    lines: OutputLines
    marked: tuple[int, ...]


def aimed_excerpt(node: Node, aim: Aim, room: int, why: str) -> Excerpt | None:
    """The node's output cut to fit `room` tokens with its call: the lines nearest `aim.marked` in up to
    MARKED_SHARE of it, the head and the tail in the rest (two lines of head to one of tail, as a
    head/tail trim keeps them); None when no marked line fits (the caller trims head and tail instead)."""
    lines = aim.lines
    total = len(lines.lines)
    near = _nearest_first(total, aim.marked)
    ends = sorted(range(total), key=lambda n: (min(n, 2 * (total - 1 - n)), n))
    best: Excerpt | None = None
    target = float(room)
    for _ in range(TRIES):
        space = target - lines.call_tokens
        keep, spent = _filled(lines, near, space * MARKED_SHARE, set(), 0.0)
        keep, spent = _filled(lines, ends, space, keep, spent)
        if not keep or keep.isdisjoint(aim.marked):
            break
        excerpt = build_excerpt(node, lines, keep, why)
        if excerpt.tokens <= room and (best is None or excerpt.tokens > best.tokens):
            best = excerpt
        if room - CLOSE <= excerpt.tokens <= room or len(keep) == total:
            break
        target += room - excerpt.tokens - (8 if excerpt.tokens > room else 0)  # the estimates' error
    return best


def _nearest_first(total: int, marked: tuple[int, ...]) -> list[int]:
    """Line numbers by distance to the nearest marked line, the earlier first on a tie."""
    distance = [total] * total
    for n in marked:
        distance[n] = 0
    for n in range(1, total):  # two sweeps: the nearest marked line on either side
        distance[n] = min(distance[n], distance[n - 1] + 1)
    for n in range(total - 2, -1, -1):
        distance[n] = min(distance[n], distance[n + 1] + 1)
    return sorted(range(total), key=lambda n: (distance[n], n))


def _filled(
    lines: OutputLines, order: list[int], room: float, keep: set[int], spent: float
) -> tuple[set[int], float]:
    """`keep` and the lines of `order` taken while their estimated tokens, and a marker per run, fit in `room`."""
    for n in order:
        if n in keep:
            continue
        cost = lines.tokens[n] + (0 if (n - 1 in keep or n + 1 in keep) else MARKER_TOKENS)
        if spent + cost > room:
            break
        keep.add(n)
        spent += cost
    return keep, spent
