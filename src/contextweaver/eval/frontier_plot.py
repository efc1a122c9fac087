"""The frontier figure: window-N (N = 2..20) as a line, each strategy's unbounded point against it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from contextweaver.eval.frontier import frontier_points, run_point
from contextweaver.eval.plots import _MARKERS, _png, plain_tokens, plt


def frontier_png(results: Sequence[dict[str, Any]], title: str = "") -> bytes:
    """Recall (pooled) against mean context tokens: the recency frontier and every strategy's point."""
    by_strategy: dict[str, dict[str, dict[str, Any]]] = {}
    for result in results:
        if (
            "windows" in result and "none" in result.get("budgets", {}) and result.get("seed", 0) == 0
        ):  # as the table
            by_strategy.setdefault(result["strategy"], {})[result["trajectory"]] = result
    figure, axes = plt.subplots(figsize=(8, 5.5))
    if by_strategy:
        first = next(iter(by_strategy.values()))
        front = frontier_points([r["windows"] for r in first.values()])
        axes.plot(
            [t for _, t, _ in front],
            [r for _, _, r in front],
            color="0.4",
            linewidth=1.4,
            label="recency frontier (window-N)",
        )
        for n, t, r in front:
            if n in (2, 3, 5, 10, 20):
                axes.annotate(f"w{n}", (t, r), fontsize=7, xytext=(3, -9), textcoords="offset points")
    for i, (strategy, runs) in enumerate(by_strategy.items()):
        points = [run_point(r["budgets"]["none"]) for r in runs.values()]
        items = sum(p.items for p in points)
        recall = sum(p.covered for p in points) / items if items else 1.0
        tokens = sum(p.tokens_mean for p in points) / len(points)
        axes.plot(
            [tokens],
            [recall],
            marker=_MARKERS[i % len(_MARKERS)],
            linestyle="",
            markersize=8,
            label=f"{strategy}: {recall:.3f} @ {tokens:,.0f}",  # the figures the report's table prints
        )
    axes.set_xlabel("mean context tokens (o200k, per step, averaged over runs)")
    plain_tokens(axes.xaxis)
    axes.set_ylabel("next-step evidence recall (pooled)")
    axes.set_title(f"Recall against tokens and the recency frontier{': ' + title if title else ''}")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    return _png(figure)
