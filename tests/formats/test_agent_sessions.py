"""Claude Code transcripts and Codex CLI rollouts: detected, read along the active branch, replayable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from contextweaver.cli import main
from contextweaver.formats import TrajectoryError, detect_format, load_trajectory

FIXTURES = Path(__file__).parent / "fixtures"
CLAUDE = FIXTURES / "claude_code_session.jsonl"
CODEX = FIXTURES / "codex_rollout.jsonl"


def test_both_session_files_are_detected() -> None:
    assert detect_format(CLAUDE) == "claude-code"
    assert detect_format(CODEX) == "codex"


def test_claude_code_reads_the_active_branch_across_a_compaction() -> None:
    run = load_trajectory(CLAUDE)
    assert run.task.startswith("The cart total is off by a cent")
    actions = [s.action for s in run.steps]
    assert "Actually use banker's rounding." not in [s.observation for s in run.steps]  # rewound branch
    assert run.meta["off_branch_entries"] == 2 and run.meta["sidechain_entries"] == 4
    assert run.meta["compactions"] == 1 and run.meta["summaries"] == ["Cart total rounds discounts wrong"]
    assert actions[0] == "python -m pytest -q tests/test_cart.py"
    # one response written as two entries: both calls and both results are one step, paired
    parallel = run.steps[1]
    assert [c["id"] for c in parallel.messages[0]["tool_calls"]] == ["toolu_02", "toolu_03"]
    assert [m["tool_call_id"] for m in parallel.messages[1:]] == ["toolu_02", "toolu_03"]
    assert "unpaired_tool_calls" not in parallel.meta
    # thinking keeps its signature in the verbatim blocks; the summary after compaction is a user step
    assert run.steps[0].messages[0]["content"][0]["signature"] == "c2lnLTE="
    assert (
        run.steps[0].thought
        == "Start by running the tests to see the failure.\nLet me run the test suite first."
    )
    kinds = [s.kind for s in run.steps]
    assert kinds.count("user") == 2
    summary = run.steps[kinds.index("user", kinds.index("user") + 1)]
    assert summary.observation.startswith("This session is being continued")
    assert sum(s.images for s in run.steps) == 1
    assert "Task" in actions[2] and "round-half-up" in run.steps[2].observation


def test_a_sub_agent_transcript_alone_is_read_as_its_own_run(tmp_path: Path) -> None:
    side = [json.loads(line) for line in CLAUDE.read_text().splitlines() if '"isSidechain": true' in line]
    path = tmp_path / "agent-1.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in side))
    run = load_trajectory(path)
    assert run.task == "Which rounding rule do the docs ask for?"
    assert [s.observation for s in run.steps][0] == "Totals round half up to the cent."


def test_codex_rollout_pairs_calls_by_call_id_and_keeps_the_instructions() -> None:
    run = load_trajectory(CODEX)
    assert run.system == "Keep changes minimal; run the tests after each edit."
    assert run.meta["model"] == "gpt-5-codex" and run.meta["compactions"] == 1
    first, parallel, patch = run.steps[:3]
    assert first.action == "grep -n 'def reserve' -A6 inventory/stock.py"
    assert first.observation.startswith("12:    def reserve(self, n):\n")  # Codex's JSON record unwrapped
    assert parallel.action.splitlines() == [
        "python -m pytest -q tests/test_stock.py",
        "sed -n 1,40p tests/test_stock.py",
    ]
    assert parallel.thought.startswith("**Checking the tests**")
    assert patch.action.startswith("apply_patch *** Begin Patch")
    assert run.steps[3].kind == "user" and run.steps[3].observation.startswith("Summary so far")
    assert run.steps[-1].thought.startswith("reserve() now refuses")


def test_a_message_entry_without_message_names_its_line(tmp_path: Path) -> None:
    lines = CLAUDE.read_text().splitlines()
    broken = json.loads(lines[3])
    del broken["message"]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join([*lines[:3], json.dumps(broken), *lines[4:]]))
    with pytest.raises(TrajectoryError, match="line 4: a 'assistant' entry without a 'message'"):
        load_trajectory(path, format="claude-code")


@pytest.mark.parametrize("path", [CLAUDE, CODEX], ids=["claude-code", "codex"])
def test_replay_runs_on_the_session_files(path: Path) -> None:
    result = CliRunner().invoke(
        main, ["replay", str(path), "--json", "--strategy", "cw,full", "--budget", "400"]
    )
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert len(rows) == len(load_trajectory(path).steps)
    assert all(row["tokens.cw"] <= 400 for row in rows)
    assert any(len(row["kept"]) < row["step"] for row in rows)  # the budget made the weaving compress


@pytest.mark.parametrize("path", [CLAUDE, CODEX], ids=["claude-code", "codex"])
def test_graph_runs_on_the_session_files(path: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["graph", str(path), "--out", str(tmp_path), "--format", "mermaid"])
    assert result.exit_code == 0, result.output
    text = (tmp_path / f"{path.stem}.mmd").read_text(encoding="utf-8")
    assert text.count("-->") >= len(load_trajectory(path).steps) - 1  # parent edges were found


def test_entries_of_unknown_types_are_skipped_but_still_link_the_chain(tmp_path: Path) -> None:
    entries = [json.loads(line) for line in CLAUDE.read_text().splitlines()]
    at = next(i for i, e in enumerate(entries) if e.get("type") == "user" and e.get("toolUseResult"))
    child = entries[at + 1]
    progress = {
        "type": "progress",
        "uuid": "p-1",
        "parentUuid": entries[at]["uuid"],
        "sessionId": "s",
        "data": {},
    }
    child["parentUuid"] = "p-1"
    entries.insert(at + 1, progress)
    path = tmp_path / "with-progress.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    assert detect_format(path) == "claude-code"
    assert [s.action for s in load_trajectory(path).steps] == [
        s.action for s in load_trajectory(CLAUDE).steps
    ]


def test_rollout_lines_of_unknown_types_are_skipped(tmp_path: Path) -> None:
    lines = CODEX.read_text().splitlines()
    lines.insert(2, json.dumps({"timestamp": "t", "type": "ghost_snapshot", "payload": {"commit": "abc"}}))
    path = tmp_path / "rollout-newer.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert detect_format(path) == "codex"
    assert len(load_trajectory(path).steps) == len(load_trajectory(CODEX).steps)


def split_line(lines: list[str], at: int) -> list[str]:
    """Line `at` (0-based) cut in two inside its JSON, as an edit that put a raw newline in it does."""
    line = lines[at]
    middle = line.index('"timestamp"')
    return [*lines[:at], line[:middle], line[middle:], *lines[at + 1 :]]


def test_a_transcript_with_a_damaged_line_and_a_gap_in_its_chain_reads_with_a_warning(tmp_path: Path) -> None:
    lines = CLAUDE.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if '"uuid": "00000000-0000-4000-8000-000000000003"' in line)
    path = tmp_path / "damaged.jsonl"
    path.write_text("\n".join(split_line(lines, at)) + "\n")
    assert detect_format(path) == "claude-code"
    run = load_trajectory(path)
    whole = load_trajectory(CLAUDE)
    assert run.task == whole.task  # the chain is bridged back to the user's prompt
    assert [s.action for s in run.steps] == [s.action for s in whole.steps]
    assert run.meta["damaged_lines"] == [at + 1, at + 2] and run.meta["bridged_gaps"] == 1
    damage, gap = run.warnings
    assert damage.startswith(f"2 damaged line(s) left out ({at + 1}, {at + 2}; line {at + 1}: invalid JSON")
    assert f"the parent of line(s) {at + 3} is not in the file" in gap

    result = CliRunner().invoke(main, ["replay", str(path), "-s", "full"])
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    assert f"warning: {path}: 2 damaged line(s) left out ({at + 1}, {at + 2};" in result.output


def test_a_transcript_whose_opening_prompt_is_damaged_takes_its_summary_as_the_task(tmp_path: Path) -> None:
    lines = CLAUDE.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if '"parentUuid": null' in line and '"type": "user"' in line)
    path = tmp_path / "no-prompt.jsonl"
    path.write_text("\n".join(split_line(lines, at)) + "\n")
    run = load_trajectory(path)
    assert run.task == "Cart total rounds discounts wrong"
    assert run.steps and "its task is the session's summary line" in run.warnings[-1]
    without_summary = tmp_path / "no-prompt-no-summary.jsonl"
    without_summary.write_text("\n".join(split_line(lines, at)[1:]) + "\n")
    alone = load_trajectory(without_summary)
    assert alone.task.startswith("(the prompt that opened this session is not in the transcript")
    assert alone.steps and "Traceback" not in "".join(alone.warnings)


def test_a_file_of_damaged_lines_only_is_not_read_as_a_transcript(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text('{"type": "user", "message": \n{"broken\n')
    with pytest.raises(TrajectoryError, match="line 1: invalid JSON"):
        load_trajectory(path)
