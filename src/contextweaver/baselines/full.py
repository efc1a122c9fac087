"""Full history: every observation verbatim (the upper bound on recall and on tokens)."""

from __future__ import annotations

from contextweaver.baselines.base import HistoryStrategy
from contextweaver.selectors.plan import Plan


class FullHistory(HistoryStrategy):
    name = "full"

    def plan(self) -> Plan:
        last = len(self.nodes) - 1
        return Plan(full=[(i, "full history") for i in range(last, 0, -1)], compressed_reason="")
