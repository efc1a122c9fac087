"""`contextweaver fit`: the score it maximises is the frontier report's, the search moves a setting that
costs evidence, and the weights file it writes is one the selector then reads."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.shared_data import absent

from contextweaver.cli import main
from contextweaver.config import WeaverConfig
from contextweaver.config.select_weights import SelectSettings, load_settings
from contextweaver.eval.fit import Run, fit, holdout_of
from contextweaver.eval.fit_score import DatasetScore, Score, prepare, run_point
from contextweaver.eval.frontier import run_point as report_point
from contextweaver.eval.trajectory_run import evaluate
from contextweaver.formats import load_trajectories
from contextweaver.formats.base import Trajectory
from contextweaver.records import Step
from contextweaver.selectors.select import SelectSelector

from .conftest import ROOT, write_jsonl

TRAIN = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "train"
VIEW = "\n".join(f"{n:>4}\tline {n} of the module" for n in range(1, 201))
VIEW = VIEW.replace("line 150 of the module", "def compute_total_price(order):")
VIEW = VIEW.replace("line 151 of the module", "    rate = DISCOUNT_RATE_77")


def long_range_steps(n: int) -> list[Step]:
    """A file view, filler, a step naming its function, then a step using a constant only the view showed."""
    return [
        Step("read the module", f"nl -ba shop/pricing_{n}.py", VIEW),
        *[Step(f"look {i}", f"ls dir{i}", f"file_{i}.txt\nother_{i}.txt") for i in range(8)],
        Step("the bug must be in compute_total_price", "grep -n compute_total_price shop/*.py", "no match"),
        Step("DISCOUNT_RATE_77 is the wrong rate", f"sed -i s/_77/_78/ shop/pricing_{n}.py", ""),
        Step("check", "python -m pytest -q", "1 passed"),
    ]


def runs(count: int) -> list[Run]:
    return [
        Run(
            "shop",
            f"shop-{n}",
            Trajectory(list(ROOT), long_range_steps(n), meta={"instance_id": f"shop-{n}"}),
        )
        for n in range(count)
    ]


def test_the_fit_score_is_the_frontier_report_score(bugfix: Trajectory) -> None:
    for trajectory in (bugfix, runs(1)[0].trajectory):
        record = evaluate(trajectory, "cw-select", [None])
        prepared = prepare(trajectory)
        assert run_point(trajectory, prepared, SelectSettings()) == report_point(record["budgets"]["none"])
        assert prepared.windows == record["windows"]


def test_the_search_moves_a_setting_that_loses_long_range_evidence() -> None:
    start = replace(SelectSettings(), extra_tokens=0)
    result = fit(runs(2), start, rounds=1, knobs=["extra_tokens", "lookback"])
    assert result.settings.extra_tokens > 0
    assert result.fit_after.objective > result.fit_before.objective
    assert result.fit_after.datasets[0].recall > result.fit_before.datasets[0].recall
    assert any("extra_tokens 0 ->" in move for move in result.moves)
    assert result.hold_before is None  # nothing held out
    tried = {(t["setting"], t["value"]): t["objective"] for t in result.trials}
    assert set(tried) == {("extra_tokens", v) for v in (1200, 2400, 3600, 4800)} | {
        ("lookback", 3),
        ("lookback", 8),
    }
    assert max(tried.values()) == round(result.fit_after.objective, 5)


def test_holdout_is_a_stable_share() -> None:
    ids = [f"repo__repo-{i}" for i in range(2000)]
    held = [i for i in ids if holdout_of(i, 0.25)]
    assert 400 < len(held) < 600
    assert held == [i for i in ids if holdout_of(i, 0.25)]
    assert not any(holdout_of(i, 0.0) for i in ids)


def test_the_command_writes_weights_the_selector_reads(tmp_path: Path) -> None:
    for name in ("agent-a", "agent-b"):
        (tmp_path / name).mkdir()
        for n in range(2):
            write_jsonl(tmp_path / name / f"shop-{n}.jsonl", long_range_steps(n))
    start = tmp_path / "start.json"
    start.write_text(
        json.dumps({"format": "contextweaver.select_weights/1", "settings": {"extra_tokens": 0}}),
        encoding="utf-8",
    )
    out = tmp_path / "weights.json"
    args = ["fit", str(tmp_path / "agent-a"), str(tmp_path / "agent-b"), "--holdout", "0", "--rounds", "1"]
    result = CliRunner().invoke(main, [*args, "--start", str(start), "-o", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    document = json.loads(out.read_text())
    assert document["fitted_on"]["runs"] == 4 and document["held_out"]["runs"] == 0
    assert set(document["scores"]["fit"]["after"]["datasets"]) == {"agent-a", "agent-b"}
    assert document["command"].startswith("contextweaver fit ") and "--start" in document["command"]
    assert document["started_from"]["extra_tokens"] == 0
    fitted = load_settings(out)
    assert fitted.extra_tokens > 0
    selector = SelectSelector.from_config(WeaverConfig(selector="select", select={"weights": str(out)}))
    assert selector.settings == fitted
    assert "objective" in result.output


def test_a_bad_input_is_named(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(main, ["fit", str(tmp_path / "empty"), "-o", str(tmp_path / "w.json")])
    assert result.exit_code == 2 and f"no recorded run in {tmp_path / 'empty'}" in result.output
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "contextweaver.select_weights/1", "settings": {"lookbak": 3}}')
    write_jsonl(tmp_path / "empty" / "shop-0.jsonl", long_range_steps(0))
    args = ["fit", str(tmp_path / "empty"), "--start", str(bad), "-o", str(tmp_path / "w.json")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and "bad.json: unknown setting(s) lookbak" in result.output


@pytest.mark.data
def test_on_training_runs_the_fit_score_is_the_report_score() -> None:
    archive = TRAIN / "swe-agent__gpt-4o__multi-swe-bench-java__89.tar.gz"
    if not archive.exists():
        pytest.skip(absent(archive))
    trajectory = load_trajectories(archive)[0]
    record = evaluate(trajectory, "cw-select", [None])
    assert run_point(trajectory, prepare(trajectory), SelectSettings()) == report_point(
        record["budgets"]["none"]
    )


def _score(**margins: float) -> Score:
    return Score(tuple(DatasetScore(name, 10, 0.9, 8000.0, m, 0.05, 1.0) for name, m in margins.items()))


def test_a_held_out_margin_that_falls_is_warned() -> None:
    from contextweaver.cli.fit import holdout_warning

    before = _score(gemini=0.06, java=0.01)
    assert holdout_warning(before, _score(gemini=0.07, java=0.01)) is None  # held or rose
    assert holdout_warning(None, None) is None  # no hold-out
    fell = holdout_warning(before, _score(gemini=0.07, java=0.004))
    assert fell is not None and "java +0.0100 -> +0.0040" in fell and "objective" in fell
    one = holdout_warning(before, _score(gemini=0.05, java=0.01))  # the minimum held, one dataset fell
    assert one is not None and "gemini +0.0600 -> +0.0500" in one and "objective" not in one
