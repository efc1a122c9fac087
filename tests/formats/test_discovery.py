"""A folder is walked for runs in the layouts agents write; the same walk serves every command."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.formats.layouts import (
    claude_code_projects,
    codex_sessions,
    mini_swe_agent_run,
    openhands_conversations,
    swe_agent_run,
)

from contextweaver.eval.runner import discover
from contextweaver.formats import TrajectoryError, load_trajectories, load_trajectory
from contextweaver.formats.discovery import run_paths


def names(paths: list[Path], root: Path) -> list[str]:
    return [p.relative_to(root).as_posix() for p in paths]


def test_swe_agent_output_folder(tmp_path):
    run = swe_agent_run(tmp_path)
    assert names(run_paths(run), run) == [
        "astro__astro-1/astro__astro-1.traj",
        "numpy__numpy-2/numpy__numpy-2.traj",
    ]
    runs = load_trajectories(run)
    assert [(r.format, len(r.steps), r.task) for r in runs] == [
        ("swe-agent", 2, "ISSUE: astro__astro-1"),
        ("swe-agent", 2, "ISSUE: numpy__numpy-2"),
    ]
    assert (
        load_trajectory(run / "numpy__numpy-2").task == "ISSUE: numpy__numpy-2"
    )  # an instance folder is one run
    assert load_trajectory(run, instance="numpy__numpy-2").task == "ISSUE: numpy__numpy-2"
    (run / "astro__astro-1" / "astro__astro-1.traj").write_text("{broken")
    assert load_trajectory(run, instance="numpy__numpy-2").steps  # the run's own file alone is read


def test_a_folder_of_several_runs_needs_an_instance(tmp_path):
    run = swe_agent_run(tmp_path)
    with pytest.raises(
        TrajectoryError, match=r"holds 2 runs \(astro__astro-1, numpy__numpy-2\); pick one with instance="
    ):
        load_trajectory(run)


def test_mini_swe_agent_output_folder(tmp_path):
    out = mini_swe_agent_run(tmp_path)
    assert names(run_paths(out), out) == [
        "flask__flask-1/flask__flask-1.traj.json",
        "requests__requests-2/requests__requests-2.traj.json",
    ]  # preds.json and the log are not runs
    assert [r.meta["instance_id"] for r in load_trajectories(out)] == [
        "flask__flask-1",
        "requests__requests-2",
    ]


def test_openhands_conversation_folders(tmp_path):
    conversations = openhands_conversations(tmp_path)
    assert names(run_paths(conversations), conversations) == ["1f0c", "2a7d"]
    runs = load_trajectories(conversations)
    assert [r.format for r in runs] == ["openhands-sdk", "openhands-sdk"] and all(r.steps for r in runs)


def test_claude_code_project_folders(tmp_path):
    projects = claude_code_projects(tmp_path)
    for given in (projects, projects / "-home-dev-shop", projects.parent):  # projects, one project, ~/.claude
        found = run_paths(given)
        assert [p.parent.name for p in found] == ["-home-dev-shop"]  # the hidden .cache is not entered
    [run] = load_trajectories(projects)
    assert run.format == "claude-code" and run.steps


def test_codex_session_folders(tmp_path):
    codex = codex_sessions(tmp_path)
    assert names(run_paths(codex), codex) == [
        "history.jsonl",
        "sessions/2026/03/04/rollout-2026-03-04T09-00-00-0199aa00.jsonl",
    ]
    [run] = load_trajectories(codex)  # history.jsonl (the prompt history) is passed over: no reader takes it
    assert run.format == "codex" and run.steps


def test_eval_discovery_walks_the_same_layouts(tmp_path):
    run = swe_agent_run(tmp_path)
    found = discover([run])
    assert [Path(p).name for p, _ in found] == ["astro__astro-1.traj", "numpy__numpy-2.traj"]


def test_a_folder_with_no_run_names_what_it_passed_over(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "results.json").write_text('{"resolved": []}')
    (folder / "readme.txt").write_text("hello")
    with pytest.raises(TrajectoryError) as info:
        load_trajectories(folder)
    message = str(info.value)
    assert str(folder) in message and "passed over results.json" in message
    assert "SWE-agent <run>/<instance>/<instance>.traj" in message and "formats read: " in message


def test_an_empty_folder(tmp_path):
    with pytest.raises(TrajectoryError, match="no .json, .jsonl, .traj or archive in it"):
        load_trajectories(tmp_path)
