from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from contextweaver.cli import main


def test_replay_runs_on_the_shipped_example() -> None:
    result = CliRunner().invoke(main, ["replay"])
    assert result.exit_code == 0, result.output
    assert "bugfix.jsonl" in result.output
    assert "evidence" in result.output and "recall" in result.output
    for name in ("cw", "sliding_window", "masking", "full"):
        assert name in result.output


def test_replay_json_lists_every_step(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["replay", "--json", "--strategy", "cw,full", "--budget", "3000"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert [r["step"] for r in rows] == list(range(1, len(rows) + 1))
    assert all(r["tokens.cw"] <= 3000 and r["tokens.full"] <= 3000 for r in rows)


def test_truncated_trajectory_names_the_file_and_fails(tmp_path: Path) -> None:
    path = tmp_path / "run.traj.json"
    path.write_text('{"messages": [{"role": "system", "content": "x"}, {"role": "user", "con')
    result = CliRunner().invoke(main, ["replay", str(path)])
    assert result.exit_code != 0
    assert "run.traj.json" in result.output


def test_malformed_jsonl_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "steps.jsonl"
    good = json.dumps({"thought": "t", "action": "ls", "observation": "a.py"})
    path.write_text(json.dumps({"system": "s", "task": "fix it"}) + "\n" + good + "\n{not json\n")
    result = CliRunner().invoke(main, ["replay", str(path)])
    assert result.exit_code != 0
    assert "steps.jsonl" in result.output and "3" in result.output


def test_budget_below_the_task_is_a_clear_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["replay", "--budget", "20"])
    assert result.exit_code != 0
    assert "raise the budget" in result.output


def test_bad_config_override_is_reported() -> None:
    result = CliRunner().invoke(main, ["replay", "-c", "window=zero"])
    assert result.exit_code != 0
    assert "window" in result.output


def test_replay_json_streams_each_steps_evidence_per_strategy() -> None:
    result = CliRunner().invoke(main, ["replay", "--json", "--strategy", "sliding_window,full"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert sum(r["items"] for r in rows) > 0
    assert all(r["covered.full"] == r["items"] for r in rows)  # the full history holds every item
    assert sum(r["covered.sliding_window"] for r in rows) < sum(r["items"] for r in rows)


def test_full_under_a_budget_says_it_is_not_the_whole_history() -> None:
    said = "full under a budget: not the whole history"
    cut = CliRunner().invoke(main, ["replay", "--budget", "3000"], env={"COLUMNS": "200"})
    assert cut.exit_code == 0 and said in cut.output
    whole = CliRunner().invoke(main, ["replay"], env={"COLUMNS": "200"})
    assert whole.exit_code == 0 and said not in whole.output
