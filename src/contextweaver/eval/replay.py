"""Replay: feed a trajectory step by step; after step k, take the context the agent would get next."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from contextweaver.formats.base import Trajectory
from contextweaver.protocols import Strategy
from contextweaver.tokens import count_text
from contextweaver.types import Node, WovenContext


@dataclass
class ReplayStep:
    """The context after step `index` (before the agent chooses step index+1)."""

    index: int
    context: WovenContext
    text_tokens: int
    seconds: float
    """Wall time of add_step + context for this step (memory code, without LLM time if faked)."""
    node: Node | None = None
    """The node the strategy built for step `index` (parents and labels, for ContextWeaver)."""


def replay(
    trajectory: Trajectory, make_strategy: Callable[[], Strategy], budget: int | None = None
) -> Iterator[ReplayStep]:
    """Nothing about step k+1 is visible to the strategy when the context after step k is taken."""
    strategy = make_strategy()
    strategy.begin(trajectory.root)
    for index, step in enumerate(trajectory.steps, start=1):
        start = time.perf_counter()
        node = strategy.add_step(step)
        context = strategy.context(max_tokens=budget)
        seconds = time.perf_counter() - start
        yield ReplayStep(index, context, count_text(context.text()), seconds, node)
