"""The report's two verdicts, computed from its rows rather than asserted.

1. Recall at equal or lower cost: for the sliding window at each budget, the best ContextWeaver strategy
   at that same budget whose mean tokens do not exceed the window's, against the window. A baseline
   is what ContextWeaver is measured against, never the one measured.
2. Adaptive selection against its two pure arms (ancestry = cw-paper, recency = cw-recency) on
   every repository group: is it at least as good as the better arm?
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from contextweaver.eval.aggregate import GroupRow, Row
from contextweaver.strategies import spec

ANCESTRY, RECENCY, ADAPTIVE = "cw-paper", "cw-recency", "cw"
TOLERANCE = 0.0005
"""Recall differences below this are ties (rounding of the printed three decimals)."""


@dataclass
class CostVerdict:
    budget: str
    sliding_recall: float
    sliding_tokens: float
    best: str | None
    """The best ContextWeaver strategy at the same budget within the window's tokens."""
    best_recall: float
    best_tokens: float

    @property
    def holds(self) -> bool:
        return self.best is not None and self.best_recall > self.sliding_recall + TOLERANCE


def is_contextweaver(name: str) -> bool:
    """A ContextWeaver configuration (not a baseline): only these get verdicts."""
    return spec(name).baseline is None


def recall_at_cost(rows: Sequence[Row]) -> list[CostVerdict]:
    out = []
    budgets = list(dict.fromkeys(r.budget for r in rows))
    for budget in budgets:
        sliding = next((r for r in rows if r.budget == budget and r.strategy == "sliding_window"), None)
        if sliding is None:
            continue
        affordable = [
            r
            for r in rows
            if r.budget == budget and is_contextweaver(r.strategy) and r.tokens_mean <= sliding.tokens_mean
        ]
        best = max(affordable, key=lambda r: (r.recall_pooled, -r.tokens_mean), default=None)
        out.append(
            CostVerdict(
                budget,
                sliding.recall_pooled,
                sliding.tokens_mean,
                best.strategy if best else None,
                best.recall_pooled if best else float("nan"),
                best.tokens_mean if best else float("nan"),
            )
        )
    return out


@dataclass
class ArmVerdict:
    budget: str
    group: str
    trajectories: int
    ancestry: float
    recency: float
    adaptive: float

    @property
    def better_arm(self) -> float:
        return max(self.ancestry, self.recency)

    @property
    def holds(self) -> bool:
        return self.adaptive + TOLERANCE >= self.better_arm


def adaptive_vs_arms(groups: Sequence[GroupRow], rows: Sequence[Row] = ()) -> list[ArmVerdict]:
    """Per budget: one verdict per repository group, then one for all trajectories pooled."""
    recalls = {(g.strategy, g.budget, g.group): g for g in groups}
    out = []
    budgets = list(dict.fromkeys(g.budget for g in groups))
    for budget in budgets:
        names = sorted({g.group for g in groups if g.budget == budget and g.strategy == ADAPTIVE})
        for group in names:
            arms = [recalls.get((s, budget, group)) for s in (ANCESTRY, RECENCY, ADAPTIVE)]
            if any(a is None for a in arms):
                continue
            a, r, d = (x.recall_pooled for x in arms if x is not None)
            out.append(ArmVerdict(budget, group, arms[2].trajectories if arms[2] else 0, a, r, d))
        overall = {r.strategy: r for r in rows if r.budget == budget}
        if all(s in overall for s in (ANCESTRY, RECENCY, ADAPTIVE)):
            out.append(
                ArmVerdict(
                    budget,
                    "all",
                    overall[ADAPTIVE].trajectories,
                    overall[ANCESTRY].recall_pooled,
                    overall[RECENCY].recall_pooled,
                    overall[ADAPTIVE].recall_pooled,
                )
            )
    return out
