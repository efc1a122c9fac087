"""A cut that keeps what the provider has cached: the older steps in the forms the last cut gave them.

A cut weaves the whole history anew, so its context differs from the one before it from the first step whose
form changed, and the provider bills everything after that point at the price of a write. Where the room
holds only a few steps, nearly every step is a cut and the oldest steps change form at each one (one is
dropped, a placeholder comes back, an excerpt is cut anew): every step was written again. So a cut keeps the
last cut's messages up to the first step whose form it must change, and its own from there on, while the
whole still fits under its target. It must change a step where it shows an output the last cut did not
(whole or as an excerpt: what the work now needs), and where it leaves out a step whose output the last cut
showed. Elsewhere the last cut's form stands: an excerpt cut for earlier steps (as between cuts, where
nothing is decided anew), a placeholder the cut would have dropped, a step left out that the cut would have
named (the note lists it as left out). The context then shows every output the cut shows, and its newest
steps exactly as the cut chose them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from contextweaver.records import Decision, Decisions, Layout, Message, WovenContext

ABSENT, NAMED, SHOWN = 0, 1, 2
"""What a context holds of a step: nothing, its call or placeholder, its output whole or as an excerpt."""
HOLDS = {"dropped": ABSENT, "compressed": NAMED, "trimmed": SHOWN, "full": SHOWN}
KEPT = "kept as the last cut left it, before step {boundary}: the provider's cache holds those messages"
LEFT_OUT = "left out at the last cut, whose forms of the older steps this one keeps"


@dataclass(frozen=True)
class Before:
    """The last cut's context: its messages (steps appended since may follow), where its steps lie, the
    decisions of the steps it holds, in order, and how many steps it wove."""

    messages: Sequence[Message]
    layout: Layout
    shown: Sequence[Decision]
    steps: int


def kept_prefix(
    before: Before, cut: WovenContext, target: float, renote: Callable[[frozenset[int]], WovenContext]
) -> WovenContext:
    """`cut` with the longest prefix of `before` it may keep (module docstring), or `cut` itself when keeping
    it changes nothing or does not fit. `renote(steps)` weaves the cut again with its note listing `steps`
    as left out: those `before` left out and the cut names."""
    if cut.layout is None or cut.taken is None:
        return cut
    must_change, named = _boundary(before, cut)
    boundary = _fitting(before, cut, must_change, target)
    if boundary is None:
        return cut
    omits = frozenset(index for index in named if index < boundary)
    noted = renote(omits) if omits else cut
    if noted.layout is None or noted.taken is None or _tokens(before, noted, boundary) > target:
        return cut
    return _spliced(before, noted, boundary)


def _boundary(before: Before, cut: WovenContext) -> tuple[int, set[int]]:
    """The first step whose form the cut must change (one past the last cut's steps when none), and the
    steps before it that the last cut left out and this one names. Reads only the steps either shows."""
    assert cut.taken is not None
    earlier = {d.index: HOLDS[d.mode] for d in before.shown}
    now = {d.index: HOLDS[d.mode] for d in cut.taken}
    end = before.steps + 1
    omits: set[int] = set()
    for index in sorted(earlier.keys() | now.keys()):
        if index >= end:
            break
        was, shows = earlier.get(index, ABSENT), now.get(index, ABSENT)
        if (shows == SHOWN and was != SHOWN) or (was == SHOWN and shows == ABSENT):
            return index, omits
        if was == ABSENT:
            omits.add(index)
    return end, omits


def _fitting(before: Before, cut: WovenContext, boundary: int, target: float) -> int | None:
    """The latest boundary at most `boundary` whose spliced context fits under `target` and differs from the
    cut (a step before it that one of them holds); None when there is none."""
    assert cut.layout is not None
    first = min((*before.layout.starts, *cut.layout.starts), default=boundary)
    candidates = sorted(
        {i for i in (*before.layout.starts, *cut.layout.starts) if first < i < boundary} | {boundary},
        reverse=True,
    )
    for candidate in candidates:
        if candidate > first and _tokens(before, cut, candidate) <= target:
            return candidate
    return None


def _tokens(before: Before, cut: WovenContext, boundary: int) -> int:
    """Tokens of the spliced context: the last cut's up to `boundary`, the cut's from there."""
    assert cut.taken is not None
    earlier = sum(d.tokens for d in before.shown if d.index < boundary)
    dropped = sum(d.tokens for d in cut.taken if d.index < boundary)
    return cut.tokens - dropped + earlier


def _at(layout: Layout, boundary: int) -> int:
    """The message at which the steps from `boundary` on begin (the end of the steps when none)."""
    return min((start for index, start in layout.starts.items() if index >= boundary), default=layout.end)


def _spliced(before: Before, cut: WovenContext, boundary: int) -> WovenContext:
    assert cut.layout is not None and cut.taken is not None
    kept, taken_from = _at(before.layout, boundary), _at(cut.layout, boundary)
    shift = kept - taken_from
    earlier = {d.index: d for d in before.shown if d.index < boundary}
    earlier |= {
        d.index: Decision(d.index, "dropped", LEFT_OUT, 0)
        for d in cut.taken
        if d.index < boundary and d.index not in earlier
    }
    later = cut.decisions
    layout = Layout(
        {i: s for i, s in before.layout.starts.items() if i < boundary}
        | {i: s + shift for i, s in cut.layout.starts.items() if i >= boundary},
        cut.layout.end + shift,
    )
    return replace(
        cut,
        messages=[*before.messages[:kept], *cut.messages[taken_from:]],
        decisions=Decisions(len(later), lambda: [earlier.get(d.index, d) for d in later]),
        tokens=_tokens(before, cut, boundary),
        notes=[*cut.notes, KEPT.format(boundary=boundary)],
        taken=[
            *(d for d in before.shown if d.index < boundary),
            *(d for d in cut.taken if d.index >= boundary),
        ],
        layout=layout,
    )
