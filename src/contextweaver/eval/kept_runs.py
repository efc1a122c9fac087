"""The steps a strategy's successive contexts keep, as runs, read from what changed since the last one.

`WovenContext.kept` reads every decision: O(history) per step, so a replay printing it every step is
quadratic. A dropped step never extends a run, so the runs are read from the decisions of the steps a
context shows (`WovenContext.shown`, as many as the context holds); and a context mostly repeats the last
one's (the same objects, found in one comparison done in C), so `KeptRuns` keeps the runs as they stood
after each decision and reads only the rest.
"""

from __future__ import annotations

from collections.abc import Sequence

from contextweaver.prompt_cache import common_prefix
from contextweaver.records import Decision

KEPT = ("full", "trimmed")
"""The modes `WovenContext.kept` counts."""


class KeptRuns:
    """One strategy's kept steps as [first, last] runs (`metrics.index_runs` of `kept`), one `update` a step."""

    def __init__(self) -> None:
        self._decisions: list[Decision] = []
        self._runs: list[list[int]] = []
        self._marks: list[tuple[int, int]] = []
        """Per decision of the last context: how many runs there were after it, and where the last ended."""

    def update(self, decisions: Sequence[Decision]) -> list[list[int]]:
        """The runs of the steps `decisions` keeps (a context's `shown`, or all its decisions; the caller reads
        them before the next update, which changes them)."""
        decisions = decisions if isinstance(decisions, list) else list(decisions)
        same = common_prefix(self._decisions, decisions)
        count, end = self._marks[same - 1] if same else (0, 0)
        del self._runs[count:], self._marks[same:]
        runs, marks = self._runs, self._marks
        if runs:
            runs[-1] = [runs[-1][0], end]
        for decision in decisions[same:]:
            if decision.mode in KEPT:
                if runs and runs[-1][1] == decision.index - 1:
                    runs[-1][1] = decision.index
                else:
                    runs.append([decision.index, decision.index])
            marks.append((len(runs), runs[-1][1] if runs else 0))
        self._decisions = decisions
        return runs
