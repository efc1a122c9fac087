"""The recency frontier: window points computed from token counts equal what the baseline weaves."""

from __future__ import annotations

import pytest

from contextweaver.eval.evidence import history_evidence, next_step_evidence
from contextweaver.eval.frontier import (
    RunPoint,
    bootstrap_margin,
    bucket,
    frontier_points,
    interpolate,
    run_point,
    window_record,
)
from contextweaver.eval.trajectory_run import evaluate
from contextweaver.formats.base import Trajectory
from contextweaver.records import Step


@pytest.mark.parametrize(("name", "n"), [("sliding_window", 5), ("masking", 10)])
def test_window_points_equal_the_baselines_replay(bugfix: Trajectory, name: str, n: int) -> None:
    result = evaluate(bugfix, name, [None])
    steps = result["budgets"]["none"]
    tokens, count, hit, items = result["windows"][str(n)]
    assert count == len(steps)
    assert tokens == sum(s["tokens"] for s in steps)
    assert items == sum(s["items"] for s in steps)
    assert hit == sum(s["covered"] for s in steps)


def test_recall_by_distance_and_history_evidence_are_recorded(bugfix: Trajectory) -> None:
    steps = evaluate(bugfix, "sliding_window", [None])["budgets"]["none"]
    recent = [s["by_distance"].get("0-4", [0, 0]) for s in steps]
    assert sum(t for _, t in recent) > 0 and all(c == t for c, t in recent)  # a 5-window keeps 0-4
    far = [s["by_distance"]["10+"] for s in steps if "10+" in s["by_distance"]]
    assert all(c <= t for c, t in far)
    assert sum(s["history_items"] for s in steps) >= sum(s["items"] for s in steps)


def test_history_evidence_counts_items_first_said_in_a_thought() -> None:
    trajectory = Trajectory(
        [{"role": "user", "content": "task"}],
        [
            Step("I will call helper_fn_x", "echo hi", "hi"),
            Step("", "cat mod.py", "def other_fn_y(): pass"),
            Step("use helper_fn_x and other_fn_y", "python run.py", ""),
        ],
    )
    assert history_evidence(trajectory)[3] == {"helper_fn_x", "other_fn_y"}
    assert next_step_evidence(trajectory)[-1].items == {"other_fn_y"}


def test_buckets() -> None:
    assert [bucket(d) for d in (0, 4, 5, 9, 10, 40)] == ["0-4", "0-4", "5-9", "5-9", "10+", "10+"]


def test_interpolation_is_linear_and_clamped() -> None:
    points = [(2, 100.0, 0.5), (3, 200.0, 0.7)]
    assert interpolate(points, 150.0) == pytest.approx(0.6)
    assert interpolate(points, 50.0) == 0.5
    assert interpolate(points, 900.0) == 0.7


def test_margin_and_interval() -> None:
    windows = [{str(n): [100.0 * n, 1, n, 20] for n in range(2, 21)} for _ in range(10)]
    assert frontier_points(windows)[0] == (2, 200.0, 0.1)
    on = [RunPoint(400.0, 4, 20, {}) for _ in range(10)]  # exactly window-4
    assert bootstrap_margin(on, windows, rounds=50)[0] == pytest.approx(0.0)
    above = [RunPoint(400.0, 8, 20, {}) for _ in range(10)]
    value, low, high = bootstrap_margin(above, windows, rounds=50)
    assert value == pytest.approx(0.2) and low <= value <= high


def test_run_point_pools_steps() -> None:
    steps = [
        {"tokens": 10, "covered": 1, "items": 2, "by_distance": {"0-4": [1, 1], "10+": [0, 1]}},
        {"tokens": 30, "covered": 2, "items": 2, "by_distance": {"5-9": [2, 2]}},
    ]
    point = run_point(steps)
    assert point.tokens_mean == 20 and point.covered == 3 and point.items == 4
    assert point.buckets == {"0-4": (1, 1), "5-9": (2, 2), "10+": (0, 1)}


def test_window_record_on_an_empty_run() -> None:
    record = window_record(Trajectory([{"role": "user", "content": "t"}], []), [])
    assert record["5"] == [0, 0, 0, 0]


def test_report_section_puts_the_window_on_its_own_frontier(bugfix: Trajectory) -> None:
    from contextweaver.eval.frontier_plot import frontier_png
    from contextweaver.eval.frontier_report import frontier_lines, frontier_rows

    results = [evaluate(bugfix, name, [None, 400]) for name in ("sliding_window", "cw-select")]
    rows = {row.strategy: row for row in frontier_rows(results, rounds=20)}
    assert rows["sliding_window"].margin == pytest.approx(0.0, abs=1e-9)
    assert set(rows["cw-select"].history) == {"none", "400"}
    lines = frontier_lines(list(rows.values()))
    assert any(line.startswith("frontier: cw-select recall") for line in lines)
    assert frontier_png(results).startswith(b"\x89PNG")
