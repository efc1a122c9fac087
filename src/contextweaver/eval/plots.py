"""Report figures as PNG bytes (matplotlib's Agg backend: no display, same bytes for the same data)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
from matplotlib.ticker import FuncFormatter  # noqa: E402

from contextweaver.eval.aggregate import Row  # noqa: E402

_MARKERS = "os^vD<>pP*Xh"


def _png(figure: plt.Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    plt.close(figure)
    return buffer.getvalue()


def plain_tokens(axis: Any) -> None:
    """Token counts as plain thousands (10,700), never as an offset ("-4 ... 4, +1.07e4") when they are close."""
    axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))


def recall_vs_tokens(rows: Sequence[Row]) -> bytes:
    """Each strategy a line through its budgets: mean context tokens (x) against pooled recall (y)."""
    figure, axes = plt.subplots(figsize=(8, 5.5))
    strategies = list(dict.fromkeys(r.strategy for r in rows))
    for i, strategy in enumerate(strategies):
        points = sorted((r.tokens_mean, r.recall_pooled, r.budget) for r in rows if r.strategy == strategy)
        xs, ys = [p[0] for p in points], [p[1] for p in points]
        axes.plot(xs, ys, marker=_MARKERS[i % len(_MARKERS)], label=strategy, linewidth=1.2)
        for x, y, budget in points:
            axes.annotate(budget, (x, y), fontsize=6, xytext=(3, 3), textcoords="offset points", alpha=0.7)
    axes.set_xlabel("mean context tokens (o200k, per step, averaged over trajectories)")
    plain_tokens(axes.xaxis)
    axes.set_ylabel("next-step evidence recall (pooled)")
    axes.set_title("Evidence recall against context size, per strategy and budget")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, ncol=2)
    return _png(figure)


def tokens_over_steps(series: dict[str, list[tuple[int, float]]], budget: str) -> bytes:
    """Mean context tokens at each step (over the trajectories that reach it), one line per strategy."""
    figure, axes = plt.subplots(figsize=(8, 5))
    for strategy, points in series.items():
        axes.plot([p[0] for p in points], [p[1] for p in points], label=strategy, linewidth=1.1)
    axes.set_xlabel("step")
    axes.set_ylabel("context tokens before the next step")
    plain_tokens(axes.yaxis)
    axes.set_title(f"Context size over the run (budget: {budget})")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, ncol=2)
    return _png(figure)
