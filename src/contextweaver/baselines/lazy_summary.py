"""LLM-summary compaction at the budget's crossing: the history passes through until it would exceed
the high-water mark, then everything but the last steps is folded into one model-written summary and
the result is frozen until the next crossing (the compaction Claude Code and OpenHands' SDK apply).
"""

from __future__ import annotations

from dataclasses import replace

from contextweaver.baselines.llm_summary import LLMSummary
from contextweaver.protocols import Model
from contextweaver.records import Node, Step
from contextweaver.weaving.modes import WeaveSettings, Weaving


class LazySummary(LLMSummary):
    """`llm_summary` applied only at a crossing: one summary call per cut instead of one per step."""

    name = "llm_summary_lazy"
    weave_settings = WeaveSettings(mode="lazy")

    def __init__(
        self,
        keep_last: int = 5,
        model: Model | None = None,
        high_water: float = WeaveSettings.high_water,
        low_water: float = WeaveSettings.low_water,
    ) -> None:
        self.high_water = high_water
        self.low_water = low_water
        super().__init__(keep_last, model)

    def _weaving(self) -> Weaving:
        """Lazy: the history whole until the high-water mark; a cut folds the leaving steps, then weaves."""
        settings = replace(self.weave_settings, high_water=self.high_water, low_water=self.low_water)
        return Weaving(
            self.name,
            settings,
            self.planned,
            lambda: self.nodes,
            woven=self.summarized_context,
            before_cut=self.fold_leaving,
        )

    def add_step(self, step: Step) -> Node:
        return super(LLMSummary, self).add_step(step)  # no fold per step: only at a cut
