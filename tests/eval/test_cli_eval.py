"""`contextweaver eval` end to end on runs the test writes: report files, resumption, errors."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from contextweaver.cli import main


def test_eval_writes_the_report_and_a_rerun_reuses_results(trajectory_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    args = [
        "eval",
        str(trajectory_dir),
        "-s",
        "full,sliding_window,bm25,llm_summary,cw-adaptive",
        "-b",
        "150,none",
    ]
    args += ["-o", str(out), "-j", "2", "--no-progress"]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    assert "15 run(s) computed, 0 reused" in first.output
    assert "sliding_window" in first.output and "llm_summary" in first.output
    for name in ("report.csv", "report.json", "groups.csv", "report.html", "recall_vs_tokens.png"):
        assert (out / name).stat().st_size > 0
    second = CliRunner().invoke(main, args)
    assert second.exit_code == 0, second.output
    assert "0 run(s) computed, 15 reused" in second.output


def test_eval_rejects_unknown_strategies_and_bad_settings(trajectory_dir: Path, tmp_path: Path) -> None:
    bad = CliRunner().invoke(main, ["eval", str(trajectory_dir), "-s", "magic", "-o", str(tmp_path)])
    assert bad.exit_code != 0 and "cw-adaptive" in bad.output
    wrong = CliRunner().invoke(main, ["eval", str(trajectory_dir), "-s", "cw-heuristic", "-c", "window=0"])
    assert wrong.exit_code != 0 and "window" in wrong.output
    budget = CliRunner().invoke(main, ["eval", str(trajectory_dir), "-b", "lots"])
    assert budget.exit_code != 0 and "token count" in budget.output
