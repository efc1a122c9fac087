"""Every command that takes runs finds them in the layouts agents write, and no input is read as
nothing: each gives a result, or exits 2 with a message naming the file and what to do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from contextweaver.cli import main
from contextweaver.cli.fit import load_runs
from tests.formats.layouts import (
    claude_code_projects,
    codex_sessions,
    mini_swe_agent_run,
    openhands_conversations,
    swe_agent_run,
)
from tests.formats.test_anthropic_messages import request

HEADER = json.dumps({"system": "You are a coding agent.", "task": "Fix the bug."}) + "\n"


def run(args: list[str]) -> Result:
    result = CliRunner().invoke(main, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    return result


def commands(path: Path, out: Path) -> list[list[str]]:
    return [
        ["replay", str(path)],
        ["graph", str(path), "--out", str(out)],
        ["eval", str(path), "-o", str(out), "--no-progress", "-j", "1", "-s", "full", "-b", "none"],
        ["fit", str(path), "-o", str(out / "w.json"), "--no-progress"],
    ]


@pytest.mark.parametrize("command", ["replay", "graph", "eval", "fit"])
def test_an_empty_file_exits_2_naming_it(command, tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text("")
    args = next(a for a in commands(path, tmp_path / "out") if a[0] == command)
    result = run(args)
    assert result.exit_code == 2, result.output
    assert "run.jsonl" in result.output


@pytest.mark.parametrize("command", ["replay", "graph", "eval", "fit"])
def test_a_folder_with_no_run_exits_2_with_the_layouts(command, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "results.json").write_text('{"resolved": []}')
    args = next(a for a in commands(folder, tmp_path / "out") if a[0] == command)
    result = run(args)
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert "notes" in said and "<run>/<instance>/<instance>.traj" in said


@pytest.mark.parametrize("command", ["eval", "fit"])
def test_an_empty_folder_beside_a_run_exits_2_naming_the_folder(command, tmp_path):
    """Given with a run, an empty folder is not dropped unsaid (eval said "1 trajectories", exit 0)."""
    empty = tmp_path / "empty"
    empty.mkdir()
    path = tmp_path / "run.jsonl"
    path.write_text(HEADER + json.dumps({"action": "ls", "observation": "a.py"}) + "\n")
    args = next(a for a in commands(empty, tmp_path / "out") if a[0] == command)
    result = run([args[0], str(empty), str(path), *args[2:]])
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert f"no recorded run in {empty};" in said and "run.jsonl" not in said


@pytest.mark.parametrize("command", ["replay", "graph"])
def test_steps_of_nothing_exit_2_with_the_format_taken(command, tmp_path):
    path = tmp_path / "header-only.jsonl"
    path.write_text(HEADER)
    result = run(next(a for a in commands(path, tmp_path / "out") if a[0] == command))
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert "header-only.jsonl" in said and "read as jsonl" in said and "holds no steps" in said


def test_an_anthropic_request_replays_as_its_steps(tmp_path):
    path = tmp_path / "request.json"
    path.write_text(json.dumps(request(3)))
    result = run(["replay", str(path), "-s", "full,masking"])
    assert result.exit_code == 0, result.output
    assert "request.json: 3 steps (anthropic)" in result.output


def test_a_bare_list_of_anthropic_messages_replays_and_draws_its_calls(tmp_path):
    path = tmp_path / "messages.json"
    path.write_text(json.dumps(request(2)["messages"]))
    result = run(["replay", str(path), "-s", "full"])
    assert result.exit_code == 0 and "2 steps (anthropic)" in result.output, result.output
    assert "cmd 1" in result.output and "cmd 2" in result.output
    drawn = run(["graph", str(path), "--out", str(tmp_path), "--format", "mermaid"])
    assert drawn.exit_code == 0, drawn.output
    picture = (tmp_path / "messages.mmd").read_text()
    assert "cmd 2" in picture and "user:" not in picture


def test_a_mistyped_key_is_a_warning_on_stderr_with_its_line(tmp_path):
    path = tmp_path / "run.jsonl"
    steps = [{"thought": "t", "action": "ls", "observation": "a.py"}, {"thougth": "t", "action": "cat a.py"}]
    path.write_text(HEADER + "".join(json.dumps(s) + "\n" for s in steps))
    result = run(["replay", str(path), "-s", "full"])
    assert result.exit_code == 0, result.output
    assert f"warning: {path}: line 3: unknown key 'thougth' (did you mean 'thought'?)" in result.stderr
    assert "thougth" not in result.stdout


def test_swe_agent_output_folder_for_eval_fit_and_replay(tmp_path):
    folder = swe_agent_run(tmp_path)
    out = tmp_path / "out"
    result = run(
        ["eval", str(folder), "-o", str(out), "--no-progress", "-j", "1", "-s", "full", "-b", "none"]
    )
    assert result.exit_code == 0, result.output
    assert "2 trajectories x 1 strategies" in result.output
    assert [r.id for r in load_runs((str(folder),), "all", 0)] == ["astro__astro-1", "numpy__numpy-2"]
    several = run(["replay", str(folder), "-s", "full"])
    assert several.exit_code == 2 and "holds 2 runs (astro__astro-1, numpy__numpy-2)" in several.output
    said = " ".join(several.output.split())
    assert "--instance <id or 0-based index>" in said and "instance=" not in said.replace("--instance", "")
    one = run(["replay", str(folder), "-s", "full", "--instance", "numpy__numpy-2"])
    assert one.exit_code == 0 and "2 steps (swe-agent)" in one.output
    drawn = run(["graph", str(folder / "astro__astro-1"), "--out", str(out)])
    assert drawn.exit_code == 0, drawn.output


@pytest.mark.parametrize(("build", "fmt"), [(claude_code_projects, "claude-code"), (codex_sessions, "codex")])
def test_a_session_folder_of_one_run_replays(build, fmt, tmp_path):
    result = run(["replay", str(build(tmp_path)), "-s", "full"])
    assert result.exit_code == 0, result.output
    assert f"({fmt})" in result.output


@pytest.mark.parametrize("build", [mini_swe_agent_run, openhands_conversations])
def test_an_output_folder_of_several_runs_evaluates(build, tmp_path):
    out = tmp_path / "out"
    result = run(
        ["eval", str(build(tmp_path)), "-o", str(out), "--no-progress", "-j", "1", "-s", "full", "-b", "none"]
    )
    assert result.exit_code == 0, result.output
    assert "2 trajectories x 1 strategies" in result.output
