"""Lazy weaving: pass the history through until the budget demands a cut, then cut once and freeze it.

Providers bill a prompt prefix they have seen before at about a tenth of the price. Weaving every
context anew re-decides old placeholders at each step, so the prefix changes early and the cache
misses. Here each new step is appended unchanged; only when the context would exceed the high-water
mark is it woven once (by the caller's `compact`, i.e. the configured selector's plan) down to the
low-water mark, and that result becomes the frozen prefix. Both marks are shares of the room the
budget leaves above the root (system prompt and task, always kept verbatim). Placeholders and trims
are decided at a crossing and never re-decided per step, so between crossings every context starts
with the previous one, byte for byte; and a crossing keeps what it may of the last one
(`kept_prefix.py`), so where crossings come every step or two the cache still serves the older steps.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import astuple, replace
from typing import Any

from contextweaver.nodes.render import full_messages
from contextweaver.records import Decision, Decisions, Layout, Message, Node, WovenContext
from contextweaver.tokens import count_message
from contextweaver.weaving.budget import GAP_STEPS, KEEP_STEPS, BudgetError
from contextweaver.weaving.kept_prefix import Before
from contextweaver.weaving.plan import Plan

Compact = Callable[[float, bool, Before | None], WovenContext]
"""Weave the whole history under a token budget (the low-water mark), without a TEST STATUS line; the
flag says whether part of the room may be held for older steps' calls (False: the newest steps first); the
last cut's context, when given, is kept as far as it may be (`kept_prefix`)."""

AMORTIZE_STEPS = 2.0
"""Mean steps the gap between the water marks should hold, so a cut's rewrite is shared by several steps."""
LOW_FLOOR = 0.7
"""The lowest share of the room a cut weaves down to for that gap: a lower floor cuts less often but keeps
less, and with big steps the recent outputs it drops cost recall. Chosen on all the train runs
(docs/TUNING.md)."""

ONE_STEP_ROOM = 4000.0
"""Tokens of room above the root from which a cut whose two-step gap would fall below LOW_FLOOR still leaves a
gap of one mean step: big steps (a tool-calling agent's whole-file views) made every step re-cut at the high
mark. A smaller room keeps the high mark. Chosen on the train splits (docs/TUNING.md)."""
SMALL_ROOM_STEPS = 3.5
"""Mean steps a room under ONE_STEP_ROOM must hold before `lazy.small_room_gap` leaves a gap there: in a room of
two or three steps the gap comes out of a step the next one reads. Chosen on the train splits (docs/TUNING.md)."""
STATE_FIELDS = ("messages", "tokens", "full_history_tokens", "upto", "crossings", "notes")
"""What `state` saves besides the decisions: everything a cut leaves that the next context builds on."""

APPENDED = "appended unchanged since the last weave: the context is under the budget's high-water mark"


class LazyContext:
    """One growing context for one budget: a frozen prefix plus the steps appended after it.

    Tokens are added per new step from the node's cached count, so a step costs O(new steps), not a
    re-count of the history. `limit` is the budget in o200k tokens (already divided by any safety
    factor); None means the history is never cut.
    """

    def __init__(
        self, root: Node, limit: float | None, high: float, low: float, small_room_gap: float = 0.0
    ) -> None:
        self.limit = limit
        self.high = high
        self.low = low
        self.small_room_gap = small_room_gap
        self.messages: list[Message] = full_messages(root)
        self.cut: Sequence[Decision] = []
        """The decisions of the last cut (every step up to it)."""
        self.appended: list[Decision] = []
        """The decisions of the steps appended since (a new list at each cut: contexts share this one)."""
        self.taken: list[Decision] = []
        """The decisions of the steps the context holds in some form (`WovenContext.taken`)."""
        self.tokens = root.full_tokens
        self.full_history_tokens = root.full_tokens
        self.root_tokens = root.full_tokens
        self.upto = 0
        """Index of the last step in `messages`."""
        self.crossings = 0
        self.notes: list[str] = []
        self.layout: Layout | None = None
        """Where the last cut's steps lie in `messages` (None before the first cut)."""

    def context(
        self, nodes: Sequence[Node], compact: Compact, status_line: str | None, strategy: str
    ) -> WovenContext:
        """`nodes` is the whole history with the root at 0; only the steps after `upto` are read."""
        for node in nodes[self.upto + 1 :]:
            self.messages += full_messages(node)
            decision = Decision(node.index, "full", APPENDED, node.full_tokens)
            self.appended.append(decision)
            self.taken.append(decision)
            self.tokens += node.full_tokens
            self.full_history_tokens += node.full_tokens
        self.upto = len(nodes) - 1
        status = self._status(status_line)
        status_tokens = sum(count_message(m) for m in status)
        crossed = self.limit is not None and self.tokens + status_tokens > self.mark(self.high)
        if crossed:
            self._weave_down(compact, status_tokens, len(nodes) - 1)
        return WovenContext(
            messages=[*self.messages, *status],  # shared with later contexts: copy to change
            decisions=self._decisions(),
            tokens=self.tokens + status_tokens,
            full_history_tokens=self.full_history_tokens,
            strategy=strategy,
            budget=None if self.limit is None else int(self.limit),
            test_status=status_line if status else None,
            notes=list(self.notes),
            compacted=crossed,
            taken=list(self.taken),
        )

    def _decisions(self) -> Decisions:
        """Every step's decision as it stands now, listed only when read (a copy per step was quadratic)."""
        cut, appended, count = self.cut, self.appended, len(self.appended)
        return Decisions(len(cut) + count, lambda: [*cut, *appended[:count]])

    def state(self) -> dict[str, Any]:
        """What the context holds as plain data (messages, decisions, counters), to rebuild it after a
        restart with `restore`: taken right after a cut, it is the frozen prefix."""
        return {
            **{name: getattr(self, name) for name in STATE_FIELDS},
            "decisions": [list(astuple(d)) for d in self._decisions()],
            "layout": None if self.layout is None else self.layout.state(),
        }

    def restore(self, state: dict[str, Any]) -> None:
        """Continue from `state()`; only the steps after its `upto` are appended by the next context."""
        for name in STATE_FIELDS:
            setattr(self, name, state[name])
        self.cut = [Decision(*d) for d in state["decisions"]]
        self.appended = []
        self.taken = [d for d in self.cut if d.mode != "dropped"]
        layout = state.get("layout")  # none in a state saved before layouts were kept
        self.layout = None if layout is None else Layout.restored(layout)

    def mark(self, share: float) -> float:
        """The water mark at `share` of the room above the root, which is always kept verbatim: a share
        of the whole budget would leave the steps almost nothing after a cut when the system prompt and
        task fill much of it."""
        assert self.limit is not None
        room = self.limit - self.root_tokens
        return self.root_tokens + share * room if room > 0 else self.limit

    def _status(self, status_line: str | None) -> list[Message]:
        """Before the first cut every test output is still in full, so no status line is needed; after
        it, the current line goes last, where changing it costs the cache nothing."""
        if not self.crossings or not status_line:
            return []
        return [{"role": "user", "content": status_line}]

    def low_share(self) -> float:
        """The share a cut weaves down to. In a room of more than KEEP_STEPS + AMORTIZE_STEPS mean steps, a gap
        of what the room holds beyond KEEP_STEPS, at most GAP_STEPS (never above the low mark). Otherwise low
        enough that the gap up to the high mark holds AMORTIZE_STEPS mean steps (a cut's rewrite is then paid once per that many steps), never below
        LOW_FLOOR; when even that cannot be had, a gap of one mean step in a room of ONE_STEP_ROOM or
        more (a cut every other step, not every step); when not even that, halfway between the marks in
        such a room (`steps_too_big`), else `small_room`. O(1): running totals."""
        assert self.limit is not None
        room = max(self.limit - self.root_tokens, 1.0)
        mean_step = (self.full_history_tokens - self.root_tokens) / max(1, self.upto)
        steps = room / max(mean_step, 1.0)
        gap = min(GAP_STEPS, steps - KEEP_STEPS)
        if gap > AMORTIZE_STEPS:  # a room of many steps: a gap of up to GAP_STEPS, KEEP_STEPS kept below it
            return min(self.low, self.high - gap / steps)
        wanted = self.high - AMORTIZE_STEPS * mean_step / room
        if wanted >= self.low:
            return self.low
        if wanted >= LOW_FLOOR:
            return wanted
        one_step = self.high - mean_step / room
        if room < ONE_STEP_ROOM:
            return self.small_room(steps)
        return one_step if one_step >= LOW_FLOOR else self.steps_too_big()

    def small_room(self, steps: float) -> float:
        """The high mark: a small room re-cuts every step or two whatever the mark, and a lower one keeps
        less of what the next step reads. `small_room_gap` mean steps below it where the user chose so and
        the room holds SMALL_ROOM_STEPS or more: a lower bill for less evidence (docs/TUNING.md)."""
        if self.small_room_gap and steps >= SMALL_ROOM_STEPS:
            return self.high - self.small_room_gap / steps
        return self.high

    def steps_too_big(self) -> float:
        """Halfway between the marks: where a mean step takes over 40% of a room of ONE_STEP_ROOM or more,
        the high mark made every step cut and write the whole room again (the bill of no cache at all);
        a short gap lets the smaller steps in between pass without a cut (docs/TUNING.md)."""
        return (self.low + self.high) / 2

    def _before(self) -> Before | None:
        """The last cut's context, for the next cut to keep what it may of it (None before the first)."""
        if self.layout is None:
            return None
        starts = self.layout.starts
        shown = [d for d in self.taken if d.index in starts]
        return Before(self.messages, self.layout, shown, len(self.cut))

    def _weave_down(self, compact: Compact, status_tokens: int, step: int) -> None:
        assert self.limit is not None
        self.crossings += 1
        low = self.low_share()
        target = self.mark(low) - status_tokens
        try:
            woven = compact(target, low < self.high, self._before())
        except BudgetError:  # the low mark cannot hold the root: use the whole budget
            try:
                woven = compact(self.limit - status_tokens, False, None)
            except BudgetError as exc:  # the value it names holds the TEST STATUS line too
                if exc.need is None or exc.budget is None:
                    raise
                raise BudgetError.of(
                    exc.budget, replace(exc.need, kept=exc.need.kept + status_tokens)
                ) from None
        self.messages = woven.messages
        self.cut, self.appended, self.taken = woven.decisions, [], list(woven.shown)
        self.layout = woven.layout
        self.tokens = woven.tokens
        self.notes = [
            *woven.notes,
            f"woven down to {low:.0%} of the room above the root at step {step} (cut {self.crossings}); "
            "later steps are appended unchanged until the next cut",
        ]


RECENT = "recent: room left under the low-water mark at the cut"


def upgraded_plan(plan: Plan, base: WovenContext, nodes: Sequence[Node], target: float) -> Plan | None:
    """`plan` plus the newest outputs `base` (the plan woven under `target`) left as placeholders, in
    full while they fit in the room it left; None when none fits. A cut is rare, so it should use its
    room; no step is dropped for it (a step too big is skipped, smaller older ones may still fit).
    Steps the plan compressed for a reason of their own (a repeated output) stay compressed.
    """
    room = target - base.tokens
    extra: list[tuple[int, str]] = []
    for decision in reversed(base.shown):
        if decision.mode != "compressed" or decision.index in plan.compressed_reasons:
            continue
        grow = nodes[decision.index].full_tokens - nodes[decision.index].compressed_tokens
        if grow <= room:
            extra.append((decision.index, RECENT))
            room -= grow
    if not extra:
        return None
    return replace(
        plan,
        full=[*plan.full, *extra],
        notes=list(plan.notes),
        compressed_reasons=dict(plan.compressed_reasons),
        excerpts=dict(plan.excerpts),
    )
