"""Report figures as PNG bytes (matplotlib's Agg backend: no display, same bytes for the same data)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

from contextweaver.eval.aggregate import Row  # noqa: E402

_MARKERS = "os^vD<>pP*Xh"
FULL = "full"


def _png(figure: plt.Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    plt.close(figure)
    return buffer.getvalue()


def plain_tokens(axis: Any) -> None:
    """Token counts as plain thousands (10,700), never as an offset ("-4 ... 4, +1.07e4") when they are close."""
    axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))


def recall_vs_tokens(rows: Sequence[Row]) -> bytes:
    return _png(recall_vs_tokens_figure(rows))


def recall_vs_tokens_figure(rows: Sequence[Row]) -> plt.Figure:
    """Each strategy a line through its budgets: mean context tokens (x) against pooled recall (y).
    The budget is the marker's shape, not a text label: labels of nearby points printed over each
    other ("8f6000"). Both legends sit outside the axes, so they cover no point."""
    figure, axes = plt.subplots(figsize=(9, 5.5), layout="constrained")
    strategies = list(dict.fromkeys(r.strategy for r in rows))
    budgets = list(dict.fromkeys(r.budget for r in rows))
    marker = {budget: _MARKERS[i % len(_MARKERS)] for i, budget in enumerate(budgets)}
    lines = []
    for strategy in strategies:
        points = sorted((r.tokens_mean, r.recall_pooled, r.budget) for r in rows if r.strategy == strategy)
        (line,) = axes.plot([p[0] for p in points], [p[1] for p in points], linewidth=1.2, label=strategy)
        lines.append(line)
        for x, y, budget in points:
            axes.plot(x, y, marker=marker[budget], color=line.get_color(), markersize=7, linestyle="none")
    axes.set_xlabel("mean context tokens (o200k, per step, averaged over trajectories)")
    plain_tokens(axes.xaxis)
    axes.set_ylabel("next-step evidence recall (pooled)")
    axes.set_title("Evidence recall against context size, per strategy and budget")
    axes.grid(alpha=0.3)
    shapes = [
        Line2D([], [], marker=marker[b], color="#555555", linestyle="none", markersize=7, label=b)
        for b in budgets
    ]
    figure.legend(handles=lines, title="strategy", fontsize=8, loc="outside right upper")
    figure.legend(handles=shapes, title="budget (one shape\nover another:\nthe same result)", fontsize=8,
                  title_fontsize=8, loc="outside right lower")  # fmt: skip
    return figure


def tokens_over_steps(
    series: dict[str, list[tuple[int, float]]], budget: str, runs: Sequence[tuple[str, int]]
) -> bytes:
    return _png(tokens_over_steps_figure(series, budget, runs))


def tokens_over_steps_figure(
    series: dict[str, list[tuple[int, float]]], budget: str, runs: Sequence[tuple[str, int]]
) -> plt.Figure:
    """Mean context tokens at each step over the trajectories that reach it, one line per strategy; the
    title names the runs (id, steps). `full` is drawn last, dashed and black, so a strategy that sends
    the whole history (cw without a cut) shows under it instead of hiding it."""
    figure, axes = plt.subplots(figsize=(8, 5))
    for strategy, points in sorted(series.items(), key=lambda item: item[0] == FULL):
        style: dict[str, Any] = {"linewidth": 1.1}
        if strategy == FULL:
            style = {"color": "black", "linestyle": "--", "linewidth": 1.6, "zorder": 5}
        axes.plot([p[0] for p in points], [p[1] for p in points], label=strategy, **style)
    axes.set_xlabel("step")
    axes.set_ylabel("context tokens before the next step")
    plain_tokens(axes.yaxis)
    axes.set_title(f"Context size over the run, budget {budget}\n{runs_named(runs)}", fontsize=10)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, ncol=2)
    return figure


def runs_named(runs: Sequence[tuple[str, int]], shown: int = 3) -> str:
    """`run a (steps 1-33)`, or `mean over 2 runs: a (steps 1-50), b (steps 1-33)`; past `shown`, how many more."""
    named = ", ".join(f"{run} (steps 1-{steps})" for run, steps in runs[:shown])
    more = f" and {len(runs) - shown} more" if len(runs) > shown else ""
    if len(runs) == 1:
        return f"run {named}"
    fewer = " (later steps: the longer runs only)" if len({steps for _, steps in runs}) > 1 else ""
    return f"mean over {len(runs)} runs: {named}{more}{fewer}"
