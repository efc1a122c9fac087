"""Every bad input a user can give a command ends in a message naming the file or flag and what to do,
with a non-zero exit: never a traceback (CliRunner keeps an uncaught exception in `result.exception`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from contextweaver.cli import main
from contextweaver.examples import example_path

EXAMPLE = str(example_path())
MALFORMED = "window: [1,\n  bad: : :\n"


def fails_cleanly(args: list[str]) -> Result:
    result = CliRunner().invoke(main, args)
    assert result.exit_code != 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    return result


@pytest.fixture
def bad_yaml(tmp_path: Path) -> Path:
    path = tmp_path / "settings.yaml"
    path.write_text(MALFORMED)
    return path


@pytest.mark.parametrize(
    "command",
    [["replay"], ["graph", EXAMPLE], ["serve", "--upstream", "http://127.0.0.1:9/v1", "--store", ":memory:"]],
)
def test_malformed_yaml_config_names_the_file_and_line(command: list[str], bad_yaml: Path) -> None:
    result = fails_cleanly([*command, "--config", str(bad_yaml)])
    assert "not valid YAML" in result.output and "line 2" in result.output
    if (
        command[0] != "serve"
    ):  # serve's --config is not options.config_option yet: it says "the --config file"
        assert "settings.yaml" in result.output


def test_graph_budget_below_the_system_prompt(tmp_path: Path) -> None:
    result = fails_cleanly(["graph", EXAMPLE, "--budget", "20", "--out", str(tmp_path)])
    assert "--budget" in result.output and "raise the budget to at least" in result.output


@pytest.mark.parametrize("fmt", ["claude-code", "codex", "swe-agent", "mini-swe-agent", "openhands-sdk"])
def test_graph_input_format_that_does_not_match(fmt: str, tmp_path: Path) -> None:
    result = fails_cleanly(["graph", EXAMPLE, "--input-format", fmt, "--out", str(tmp_path)])
    assert "bugfix.jsonl" in result.output


def test_graph_out_into_an_unwritable_place(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    result = fails_cleanly(["graph", EXAMPLE, "--out", str(blocker / "graphs")])
    assert "--out" in result.output and "a folder you can write to" in result.output


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["-b", "0"], "0 is not a token budget"),
        (["-b", "lots"], "is not a token count"),
        (["--seeds", "x"], "--seeds 0,1,2"),
        (["-s", "cw,nope"], "unknown nope"),
        (["-j", "0"], "--workers"),
    ],
)
def test_eval_bad_options_fail_before_any_run(args: list[str], said: str, tmp_path: Path) -> None:
    out = tmp_path / "eval-out"
    result = fails_cleanly(["eval", EXAMPLE, "-o", str(out), "--no-progress", *args])
    assert said in result.output
    assert not (out / "results").exists()  # nothing ran


def test_eval_refuses_a_run_at_a_budget_that_holds_the_task_but_not_a_step(tmp_path: Path) -> None:
    """The run is named with the budget that holds it and measured at the other budgets; with no other
    budget nothing is measured, and the exit status says so."""
    args = ["eval", EXAMPLE, "--no-progress", "-j", "1", "-s", "cw-select", "-b"]
    measured = CliRunner().invoke(main, [*args, "250,none", "-o", str(tmp_path / "both")])
    assert measured.exit_code == 0, measured.output
    assert (
        "at 250: 1 of 1 runs refused" in measured.output
        and "1 run(s) computed, 0 reused, 0 failed" in measured.output
    )
    alone = CliRunner().invoke(main, [*args, "250", "-o", str(tmp_path / "alone")])
    assert alone.exit_code == 1 and "nothing measured" in alone.output


def test_the_installed_command_prints_no_traceback(bad_yaml: Path) -> None:
    """What the console script runs, in a subprocess: what a user's terminal shows."""
    entry = "import sys; from contextweaver.cli import main; sys.argv[0] = 'contextweaver'; main()"
    result = subprocess.run(
        [sys.executable, "-c", entry, "replay", "--config", str(bad_yaml)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "not valid YAML" in result.stderr


@pytest.mark.parametrize("command", ["replay", "graph"])
def test_a_run_without_its_task_names_the_file(command: str, tmp_path: Path) -> None:
    steps = tmp_path / "steps-only.jsonl"
    steps.write_text('{"thought": "t", "action": "ls", "observation": "a.py"}\n')
    result = fails_cleanly([command, str(steps)] + (["--out", str(tmp_path)] if command == "graph" else []))
    assert "steps-only.jsonl" in result.output and "no system prompt or task" in result.output
    assert "begin()" not in result.output  # not the library's words


def test_fit_with_too_few_runs_for_the_holdout(tmp_path: Path) -> None:
    result = fails_cleanly(["fit", EXAMPLE, "-o", str(tmp_path / "w.json"), "--no-progress"])
    assert "--holdout" in result.output and "1 run(s) read" in result.output


def test_fit_into_a_missing_folder_fails_before_fitting(tmp_path: Path) -> None:
    result = fails_cleanly(["fit", EXAMPLE, "-o", str(tmp_path / "nowhere" / "w.json"), "--no-progress"])
    assert "-o" in result.output and "does not exist" in result.output


@pytest.mark.parametrize(
    ("command", "setting", "nearest"),
    [
        (["replay", EXAMPLE, "-s", "cw"], "windw=3", "window"),
        (["graph", EXAMPLE, "--out", "{tmp}"], "lazy.high_watr=0.9", "lazy.high_water"),
        (["eval", EXAMPLE, "-s", "cw", "--no-progress", "-o", "{tmp}"], "nosuch=1", "window"),
    ],
)
def test_an_unknown_setting_names_it_and_the_valid_keys_nearest_first(
    command: list[str], setting: str, nearest: str, tmp_path: Path
) -> None:
    """pydantic's own text ("1 validation error for WeaverConfig ... Extra inputs are not permitted")
    named no valid key."""
    result = fails_cleanly([*(a.format(tmp=tmp_path) for a in command), "-c", setting])
    assert result.exit_code == 2, result.output
    key = setting.partition("=")[0]
    assert f"unknown setting '{key}'; valid: {nearest}, " in " ".join(result.output.split())
    assert "validation error" not in result.output and "pydantic" not in result.output


def test_an_unknown_memory_setting_names_the_valid_keys(tmp_path: Path) -> None:
    result = fails_cleanly(["eval", EXAMPLE, "--memory", "modle=x", "-o", str(tmp_path), "--no-progress"])
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert "unknown setting 'modle'; valid: model, " in said and "pydantic" not in said


@pytest.mark.parametrize("written", ["8k", "8K", "8000", "8_000"])
def test_a_budget_is_read_as_people_write_it(written: str, tmp_path: Path) -> None:
    replayed = CliRunner().invoke(main, ["replay", EXAMPLE, "-s", "full", "--budget", written])
    assert replayed.exit_code == 0 and "budget 8,000" in replayed.output, replayed.output
    drawn = CliRunner().invoke(main, ["graph", EXAMPLE, "--budget", written, "--out", str(tmp_path)])
    assert drawn.exit_code == 0 and "budget 8,000" in (tmp_path / "bugfix.mmd").read_text(), drawn.output
    out = tmp_path / "eval"
    args = ["eval", EXAMPLE, "-s", "full", "-b", written, "-o", str(out), "--no-progress", "-j", "1"]
    evaluated = CliRunner().invoke(main, args)
    assert evaluated.exit_code == 0, evaluated.output
    assert [row["budget"] for row in json.loads((out / "report.json").read_text())["rows"]] == ["8000"]
    configured = CliRunner().invoke(main, ["replay", EXAMPLE, "-s", "cw", "-c", f"budget={written}"])
    assert configured.exit_code == 0, configured.output


@pytest.mark.parametrize("written", ["8x", "8__000", "k"])
def test_a_budget_that_is_no_token_count_says_how_to_write_one(written: str) -> None:
    result = fails_cleanly(["replay", EXAMPLE, "-s", "full", "--budget", written])
    assert result.exit_code == 2 and "give e.g. 8000, 8_000 or 8k" in " ".join(result.output.split())
