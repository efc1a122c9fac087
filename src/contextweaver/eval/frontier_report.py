"""The frontier section of a report: per strategy, pooled recall and tokens unbounded, the margin over
the window-N frontier with its bootstrap interval and the target it is held to, recall by evidence
distance, and history evidence at every budget (what a budget that drops old thoughts costs)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from contextweaver.eval.checks import is_contextweaver
from contextweaver.eval.figures import number
from contextweaver.eval.frontier import (
    BUCKETS,
    RunPoint,
    bootstrap_margin,
    frontier_points,
    headroom_target,
    run_point,
)


@dataclass
class FrontierRow:
    strategy: str
    runs: int
    recall: float
    tokens: float
    margin: float
    low: float
    high: float
    target: float
    buckets: dict[str, float | None]
    history: dict[str, float | None] = field(default_factory=dict)
    """Budget -> pooled history evidence."""
    whole: bool = False
    """Every unbounded context was the full history: nothing was selected, so there is no verdict."""

    @property
    def baseline(self) -> bool:
        """A baseline is measured for comparison and gets no verdict."""
        return not is_contextweaver(self.strategy)

    @property
    def holds(self) -> bool:
        return not self.whole and not self.baseline and self.low >= 0 and self.margin >= self.target

    @property
    def verdict_holds(self) -> bool | None:
        """Whether it holds; None where there is no verdict (a baseline, the full history)."""
        return None if self.whole or self.baseline else self.holds

    @property
    def verdict(self) -> str:
        if self.whole:
            return "n/a: the full history"
        if self.baseline:
            return "n/a: a baseline"
        return "HOLDS" if self.holds else "does not hold"


def _by_strategy(results: Sequence[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for result in results:
        if "windows" in result and "none" in result.get("budgets", {}) and result.get("seed", 0) == 0:
            out.setdefault(result["strategy"], {})[result["trajectory"]] = result
    return out


def _by_distance(points: Sequence[RunPoint]) -> dict[str, float | None]:
    """Pooled recall per evidence-distance bucket (None: no item at that distance)."""
    buckets: dict[str, float | None] = {}
    for name in BUCKETS:
        total = sum(p.buckets[name][1] for p in points)
        buckets[name] = sum(p.buckets[name][0] for p in points) / total if total else None
    return buckets


def _history(runs: dict[str, dict[str, Any]], ids: Sequence[str]) -> dict[str, float | None]:
    """Pooled history evidence at every budget of the first run (None: no item at that budget)."""
    history: dict[str, float | None] = {}
    for budget in runs[ids[0]]["budgets"]:
        steps = [s for i in ids for s in runs[i]["budgets"].get(budget, [])]
        total = sum(s.get("history_items", 0) for s in steps)
        history[budget] = sum(s.get("history_covered", 0) for s in steps) / total if total else None
    return history


def frontier_rows(results: Sequence[dict[str, Any]], rounds: int = 1000) -> list[FrontierRow]:
    """One row per strategy that was replayed unbounded; the frontier comes from the same runs."""
    rows = []
    for strategy, runs in _by_strategy(results).items():
        ids = sorted(runs)
        windows = [runs[i]["windows"] for i in ids]
        points = [run_point(runs[i]["budgets"]["none"]) for i in ids]
        if not points or not frontier_points(windows):
            continue
        items = sum(p.items for p in points)
        value, low, high = bootstrap_margin(points, windows, rounds)
        buckets = _by_distance(points)
        history = _history(runs, ids)
        unbounded = [s for i in ids for s in runs[i]["budgets"]["none"]]
        whole = all(s["tokens"] >= s.get("full_tokens", s["tokens"] + 1) for s in unbounded)
        rows.append(
            FrontierRow(
                strategy,
                len(ids),
                sum(p.covered for p in points) / items if items else 1.0,
                sum(p.tokens_mean for p in points) / len(points),
                value,
                low,
                high,
                headroom_target(points, windows),
                buckets,
                history,
                whole,
            )
        )
    return rows


def frontier_lines(rows: Sequence[FrontierRow]) -> list[str]:
    """One sentence per strategy for the terminal and the HTML report."""

    def num(value: float | None) -> str:
        return number(value, "{:.3f}")

    lines = []
    for row in rows:
        mark = row.verdict
        distance = ", ".join(f"{b} {num(row.buckets[b])}" for b in BUCKETS)
        history = ", ".join(f"@{b} {num(v)}" for b, v in row.history.items())
        lines.append(
            f"frontier: {row.strategy} recall {row.recall:.3f} at {row.tokens:,.0f} tokens, margin "
            f"{row.margin:+.3f} [95% CI {row.low:+.3f}, {row.high:+.3f}] over window-N (target "
            f"{row.target:+.3f}) -> {mark}; by distance {distance}; history evidence {history}"
        )
    return lines
