"""LLM-summary compaction at the budget's crossing: the history passes through until it would exceed
the high-water mark, then everything but the last steps is folded into one model-written summary and
the result is frozen until the next crossing (the compaction Claude Code and OpenHands' SDK apply).
"""

from __future__ import annotations

from contextweaver.baselines.llm_summary import LLMSummary
from contextweaver.lazy import LazyContext
from contextweaver.protocols import Model
from contextweaver.types import Node, Step, WovenContext


class LazySummary(LLMSummary):
    """`llm_summary` applied only at a crossing: one summary call per cut instead of one per step."""

    name = "llm_summary_lazy"

    def __init__(
        self,
        keep_last: int = 5,
        model: Model | None = None,
        high_water: float = 1.0,
        low_water: float = 0.85,
    ) -> None:
        super().__init__(keep_last, model)
        self.high_water = high_water
        self.low_water = low_water
        self._lazy: dict[int | None, LazyContext] = {}

    def add_step(self, step: Step) -> Node:
        return super(LLMSummary, self).add_step(step)  # no fold per step: only at a cut

    def _cut(self, target: float, hold_calls: bool = True) -> WovenContext:
        self.fold_leaving()
        return super().shared_context(max_tokens=int(target))

    def shared_context(self, max_tokens: int | None = None) -> WovenContext:
        if not self.nodes:
            raise RuntimeError("call begin(messages) before context()")
        lazy = self._lazy.get(max_tokens)
        if lazy is None:
            lazy = LazyContext(self.nodes[0], max_tokens, self.high_water, self.low_water)
            self._lazy[max_tokens] = lazy
        return lazy.context(self.nodes, self._cut, None, self.name)
