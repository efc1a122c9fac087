"""A Plan: what a selector (or a baseline) wants kept in full, by priority, with reasons; `weave` turns it
into messages under the budget. The current step is always the newest one, whatever its place here."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, overload

if TYPE_CHECKING:
    from contextweaver.nodes.graph import DependencyGraph
    from contextweaver.weaving.aimed_trim import Aim
    from contextweaver.weaving.excerpts import Excerpt


@dataclass
class Plan:
    """A strategy's wish: steps to keep in full, highest priority first, each with its reason.

    Every other step is compressed to the placeholder with `compressed_reason`.
    """

    full: Sequence[tuple[int, str]]
    compressed_reason: str
    notes: list[str] = field(default_factory=list)
    compressed_reasons: dict[int, str] = field(default_factory=dict)
    """Steps compressed for a reason of their own (overrides `compressed_reason`)."""
    calls_share: float = 0.0
    """Under a budget, the share of the room left after the recency floor and the older edits' calls (after
    the current step, for a plan without a floor) held for the other steps' placeholders before further
    planned outputs (a dropped step loses its thought and call too; why: `weave._Room.hold`)."""
    short_calls: bool = False
    """Under a budget, a step whose placeholder does not fit keeps its call without its reasoning
    (`render.call_messages`) rather than being dropped whole."""
    excerpts: dict[int, Excerpt] = field(default_factory=dict)
    """Planned steps kept as excerpts (whole lines of the output plus elision markers), not whole."""
    aims: dict[int, Aim] = field(default_factory=dict)
    """Planned outputs that, when they must be trimmed to fit, keep the lines nearest what recent steps
    mention beside their head and tail (`weaving/aimed_trim.py`)."""
    note_omits: frozenset[int] = frozenset()
    """Steps the working-state note lists as left out though the weave holds them: a cut that keeps the
    context before it leaves them out there (`weaving/kept_prefix.py`)."""
    ahead_of_edits: frozenset[int] = frozenset()
    """Under a budget, once these planned steps are taken (select: its recency floor), the calls of older
    steps that changed files come before the rest of the plan (`weave.EDIT_SHARE`); empty: never."""

    def why_compressed(self, index: int) -> str:
        return self.compressed_reasons.get(index, self.compressed_reason)


def warmup_plan(graph: DependencyGraph, window: int) -> Plan | None:
    """While the history has at most W steps it is returned unchanged (the graph is still built): decided
    here, before any selector is asked."""
    k = len(graph) - 1
    if k > window:
        return None
    reason = f"warmup: the history has at most W={window} steps"
    return Plan(full=NewestFirst(k, reason), compressed_reason=reason)


class NewestFirst(Sequence[tuple[int, str]]):
    """Steps `last` down to 1, each with `reason`: the plan of a strategy that keeps every step, made as it is
    read. Under a budget a weave reads it only until nothing more fits, not to the run's first step."""

    def __init__(self, last: int, reason: str) -> None:
        self.last, self.reason = last, reason

    def __len__(self) -> int:
        return max(0, self.last)

    @overload
    def __getitem__(self, position: int) -> tuple[int, str]: ...
    @overload
    def __getitem__(self, position: slice) -> list[tuple[int, str]]: ...
    def __getitem__(self, position: int | slice) -> tuple[int, str] | list[tuple[int, str]]:
        if isinstance(position, slice):
            return [self[p] for p in range(*position.indices(len(self)))]
        if not -len(self) <= position < len(self):
            raise IndexError(position)
        return self.last - (position % len(self)), self.reason

    def __iter__(self) -> Iterator[tuple[int, str]]:
        return ((index, self.reason) for index in range(self.last, 0, -1))
