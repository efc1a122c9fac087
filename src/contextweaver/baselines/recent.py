"""The last n observations in full, older ones as SWE-agent's placeholder.

With n=5 this is the paper's sliding-window baseline; with n=10 it is the observation masking of
"The Complexity Trap". The task is never elided (it is the root).
"""

from __future__ import annotations

from contextweaver.baselines.base import HistoryStrategy
from contextweaver.weaving.plan import Plan


class RecentObservations(HistoryStrategy):
    name = "recent"

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n

    def plan(self) -> Plan:
        last = len(self.nodes) - 1
        recent = range(last, max(0, last - self.n), -1)
        return Plan(
            full=[(i, f"one of the last {self.n} observations") for i in recent],
            compressed_reason=f"older than the last {self.n} observations",
        )


class SlidingWindow(RecentObservations):
    name = "sliding_window"

    def __init__(self, n: int = 5) -> None:
        super().__init__(n)


class ObservationMasking(RecentObservations):
    name = "masking"

    def __init__(self, n: int = 10) -> None:
        super().__init__(n)
