"""Full history: every observation verbatim (the upper bound on recall and on tokens)."""

from __future__ import annotations

from contextweaver.baselines.base import HistoryStrategy
from contextweaver.weaving.modes import WeaveSettings
from contextweaver.weaving.plan import NewestFirst, Plan

REASON = "full history"


class FullHistory(HistoryStrategy):
    name = "full"
    weave_settings = WeaveSettings(keep_all=REASON)

    def plan(self) -> Plan:
        last = len(self.nodes) - 1
        return Plan(full=NewestFirst(last, REASON), compressed_reason="")
