"""What the eval report shows a person: no text of a figure printed over another, the run a figure
averages named in its title, `full` visible over a strategy that sends the same tokens, and `n/a`
where nothing was measured (never `nan`)."""

from __future__ import annotations

import math
from itertools import combinations

import pytest

pytest.importorskip("matplotlib", reason="the eval extra draws the figures")

from matplotlib.text import Text  # noqa: E402

from contextweaver.eval.aggregate import GroupRow, Row  # noqa: E402
from contextweaver.eval.checks import ArmVerdict  # noqa: E402
from contextweaver.eval.html import render_html  # noqa: E402
from contextweaver.eval.plots import plt, recall_vs_tokens_figure, tokens_over_steps_figure  # noqa: E402
from contextweaver.eval.report import COLUMNS, Report  # noqa: E402

NAN = math.nan


def row(strategy: str, budget: str, tokens: float, recall: float) -> Row:
    return Row(strategy, budget, 2, tokens, tokens, 0.5, recall, recall, NAN, NAN, 0.0, 0.0, 0.01, 1.0, 0.5, 1,
               NAN, NAN)  # fmt: skip


def texts_over_each_other(figure: plt.Figure) -> list[tuple[str, str]]:
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    hidden = set()  # tick labels past the axis' limits: matplotlib keeps them but does not draw them
    for axes in figure.axes:
        (x0, x1), (y0, y1) = sorted(axes.get_xlim()), sorted(axes.get_ylim())
        hidden |= {id(t) for t in axes.get_xticklabels() if not x0 <= t.get_position()[0] <= x1}
        hidden |= {id(t) for t in axes.get_yticklabels() if not y0 <= t.get_position()[1] <= y1}
    shown = [
        t for t in figure.findobj(Text) if t.get_visible() and t.get_text().strip() and id(t) not in hidden
    ]
    boxes = [(t.get_text(), t.get_window_extent(renderer).shrunk(0.95, 0.9)) for t in shown]
    return [(a, b) for (a, box_a), (b, box_b) in combinations(boxes, 2) if box_a.overlaps(box_b)]


def test_budgets_of_nearby_points_are_never_printed_over_each_other() -> None:
    """Budgets whose points nearly coincide (8000, 16000, none at one size) printed as '8f6000'."""
    rows = [
        row(name, budget, tokens + shift, recall)
        for name, shift, recall in (("cw", 0, 0.95), ("cw-select", 4, 0.951), ("full", 8, 0.952))
        for budget, tokens in (("4000", 2_000), ("8000", 3_000), ("16000", 3_001), ("none", 3_002))
    ]
    figure = recall_vs_tokens_figure(rows)
    assert texts_over_each_other(figure) == []
    axes = figure.axes[0].get_window_extent()
    for legend in figure.legends:
        assert not legend.get_window_extent().overlaps(axes)  # no legend covers a point
    labels = {t.get_text() for legend in figure.legends for t in legend.get_texts()}
    assert {"4000", "8000", "16000", "none", "cw", "cw-select", "full"} <= labels
    plt.close(figure)


def test_tokens_over_steps_names_its_runs_and_shows_full_over_an_equal_line() -> None:
    same = [(1, 500.0), (2, 900.0), (3, 1_400.0)]
    series = {"full": same, "cw": same, "sliding_window": [(1, 500.0), (2, 700.0), (3, 800.0)]}
    figure = tokens_over_steps_figure(series, "none", [("astropy-1", 3), ("django-2", 2)])
    title = figure.axes[0].get_title()
    assert "budget none" in title and "mean over 2 runs: astropy-1 (steps 1-3), django-2 (steps 1-2)" in title
    lines = {line.get_label(): line for line in figure.axes[0].get_lines()}
    assert lines["full"].get_linestyle() == "--"
    assert lines["full"].get_zorder() > max(
        line.get_zorder() for name, line in lines.items() if name != "full"
    )
    single = tokens_over_steps_figure(series, "4000", [("astropy-1", 3)])
    assert "run astropy-1 (steps 1-3)" in single.axes[0].get_title()
    plt.close(figure)
    plt.close(single)


def test_the_html_report_shows_n_a_where_nothing_was_measured() -> None:
    report = Report(
        rows=[row("cw", "4000", 2_000, NAN)],
        groups=[GroupRow("cw", "4000", "astropy", 1, 2_000.0, NAN, NAN)],
        cost=[],
        arms=[ArmVerdict("4000", "astropy", 1, NAN, 0.5, NAN)],
    )
    page = render_html(report, COLUMNS, [])
    cells = [cell.split("<", 1)[0] for cell in page.split("<td")[1:]]
    assert not any(">nan" in f">{c.split('>', 1)[-1]}" for c in cells), cells
    assert "nan" not in page.replace("class=", "").lower().replace("nan-", "")
    assert page.count(">n/a<") >= 5
