"""Full history: every observation verbatim (the upper bound on recall and on tokens)."""

from __future__ import annotations

from contextweaver.baselines.base import HistoryStrategy
from contextweaver.selectors.plan import Plan
from contextweaver.types import WovenContext

REASON = "full history"


class FullHistory(HistoryStrategy):
    name = "full"

    def plan(self) -> Plan:
        last = len(self.nodes) - 1
        return Plan(full=[(i, REASON) for i in range(last, 0, -1)], compressed_reason="")

    def shared_context(self, max_tokens: int | None = None) -> WovenContext:
        """Without a budget the context only grows: each new step is appended, nothing is re-planned."""
        if max_tokens is not None or not self.nodes:
            return super().shared_context(max_tokens)
        return self.reweave.append(self.nodes[0], self.nodes[1:], REASON, self.name)
