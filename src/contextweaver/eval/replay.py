"""Replay: feed a trajectory step by step; after step k, take the context the agent would get next.

The one replay loop of the project (the CLI, the evaluation grid and the benchmarks all use it). It
yields one step at a time and keeps nothing, so a caller that aggregates as it goes holds only the
current contexts: several strategies replayed in lockstep (`zip` of their replays) share each step's
node extraction (`extraction_of`), and memory is bounded by the largest context, not the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from contextweaver.formats.base import Trajectory
from contextweaver.nodes.extract import cached_extraction
from contextweaver.protocols import Strategy
from contextweaver.records import Node, Step, WovenContext
from contextweaver.tokens import count_text
from contextweaver.weaving.budget import BudgetError

Limit = int | None


@dataclass
class ReplayStep:
    """The contexts after step `index` (before the agent chooses step index+1), one per budget."""

    index: int
    node: Node
    """The node the strategy built for step `index` (parents and labels, for ContextWeaver)."""
    add_seconds: float
    """Wall time of add_step, without the memory model's time when a timer is given."""
    contexts: dict[Limit, WovenContext]
    weave_seconds: dict[Limit, float] = field(default_factory=dict)

    @property
    def context(self) -> WovenContext:
        """The context at the first (for a single-budget replay, the only) budget."""
        return next(iter(self.contexts.values()))

    @property
    def seconds(self) -> float:
        """Memory time of this step at the first budget: add_step plus weaving."""
        return self.add_seconds + next(iter(self.weave_seconds.values()), 0.0)

    @cached_property
    def text_tokens(self) -> int:
        """o200k tokens of the context as plain text (counted only when asked: it scans the whole context)."""
        return count_text(self.context.text())


def replay_steps(
    trajectory: Trajectory,
    strategy: Strategy,
    budgets: Sequence[Limit] = (None,),
    model_timer: Any = None,
    *,
    first: int = 1,
    refused: dict[Limit, BudgetError] | None = None,
) -> Iterator[ReplayStep]:
    """Nothing about step k+1 is visible to the strategy when the contexts after step k are taken.

    Each step is added once, then woven at every budget: adding is the expensive part (facts, analyzer,
    memory-model calls) and does not depend on the budget. `model_timer.seconds` (the memory model's
    cumulated time) is subtracted from add_step's time. Steps before `first` are only added (to measure
    a deep step without weaving every earlier one). A strategy's `shared_context`, when it has one, is
    taken instead of `context`: its messages are shared with the next step's context, so a step costs
    what changed, not a copy of the whole context (callers only read them). With `refused`, a budget
    that cannot hold a step is recorded there and woven no more; without it, its BudgetError is raised.
    """
    strategy.begin(trajectory.root)
    for step in trajectory.steps[: max(0, first - 1)]:
        strategy.add_step(step)
    woven = getattr(strategy, "shared_context", strategy.context)
    for index, step in enumerate(trajectory.steps[max(0, first - 1) :], start=max(1, first)):
        added = _add(strategy, step, model_timer)
        replayed = ReplayStep(index, added[0], added[1], {})
        for budget in budgets:
            if refused is not None and budget in refused:
                continue
            start = time.perf_counter()
            try:
                replayed.contexts[budget] = woven(max_tokens=budget)
            except BudgetError as exc:
                if refused is None:
                    raise
                refused[budget] = exc
                continue
            replayed.weave_seconds[budget] = time.perf_counter() - start
        yield replayed


def _add(strategy: Strategy, step: Step, model_timer: Any) -> tuple[Node, float]:
    """add_step and its memory time: without the model's time, and with the step's extraction even when
    another strategy computed it (it is shared, but each strategy would pay it alone)."""
    model_before = model_timer.seconds if model_timer is not None else 0.0
    shared = cached_extraction(step)
    start = time.perf_counter()
    node = strategy.add_step(step)
    added = time.perf_counter() - start
    if model_timer is not None:
        added -= model_timer.seconds - model_before
    if shared is not None:
        added += shared.seconds
    return node, max(0.0, added)


def replay(
    trajectory: Trajectory, make_strategy: Callable[[], Strategy], budget: Limit = None
) -> Iterator[ReplayStep]:
    """A fresh strategy replayed at one budget."""
    return replay_steps(trajectory, make_strategy(), (budget,))
