"""The harness on the shared dev set: the calibration of EVALUATION.md reproduces (skipped without data)."""

from __future__ import annotations

import pytest
from tests.shared_data import absent

from contextweaver.eval import aggregate
from contextweaver.eval.trajectory_run import evaluate
from contextweaver.formats import load_trajectory

from .conftest import dev_files

pytestmark = [pytest.mark.data, pytest.mark.slow]

CALIBRATION = {  # EVALUATION.md: pooled recall, mean recall, plain-text tokens
    "full": (1.000, 1.000, 12_030),
    "sliding_window": (0.753, 0.795, 7_909),
    "masking": (0.847, 0.885, 8_950),
}


@pytest.fixture(scope="module")
def dev_results() -> list[dict]:
    files = dev_files()
    if len(files) < 35:
        pytest.skip(absent("trajectories/mini-swe-agent"))
    return [evaluate(load_trajectory(f), name, [None]) for name in CALIBRATION for f in files]


@pytest.mark.slow
def test_calibration_reproduces(dev_results: list[dict]) -> None:
    rows = {r.strategy: r for r in aggregate.rows(dev_results)}
    for name, (pooled, per_trajectory, tokens) in CALIBRATION.items():
        row = rows[name]
        assert row.trajectories == 35
        assert row.recall_pooled == pytest.approx(pooled, abs=0.01), name
        assert row.recall_mean == pytest.approx(per_trajectory, abs=0.01), name
        # message tokens add 4 framing tokens per message to the plain text the calibration counted
        assert tokens <= row.tokens_mean <= tokens * 1.03, name


def test_dev_metrics_are_in_range_and_ordered(dev_results: list[dict]) -> None:
    rows = {r.strategy: r for r in aggregate.rows(dev_results)}
    assert rows["full"].ratio_to_full == 1.0 and rows["sliding_window"].ratio_to_full < 1.0
    assert rows["sliding_window"].edit_pooled < rows["masking"].edit_pooled <= rows["full"].edit_pooled == 1.0
    assert (
        0.9 < rows["full"].prefix_share <= 1.0
    )  # append-only history: almost all of it is a reusable prefix
    assert rows["sliding_window"].prefix_share < rows["full"].prefix_share
    assert rows["full"].tokens_p95 > rows["full"].tokens_mean
