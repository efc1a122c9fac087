from __future__ import annotations

import json

import pytest

from contextweaver.formats import detect_format, load_trajectory

SYSTEM = {"role": "system", "content": "SETTING: autonomous programmer", "agent": "primary"}
TASK = {"role": "user", "content": "ISSUE: crash in parse()", "agent": "primary"}


def entry(thought: str, action: str, observation: str) -> dict:
    return {
        "thought": thought,
        "action": action,
        "observation": observation,
        "response": thought + action,
        "state": {},
    }


def turn(thought: str, action: str, observation: str | None) -> list[dict]:
    messages = [
        {
            "role": "assistant",
            "content": f"{thought}\n```\n{action}\n```",
            "thought": thought,
            "action": action,
            "agent": "primary",
        }
    ]
    if observation is not None:
        messages.append(
            {"role": "user", "content": f"{observation}\n(Open file: n/a)\nbash-$", "agent": "primary"}
        )
    return messages


def test_v0_trajectory_with_history(write):
    entries = [
        entry("Look around.", "ls\n", "a.py"),
        entry("Open it.", "open a.py\n", "1:import os"),
        entry("Done.", "submit\n", ""),
    ]
    history = [
        SYSTEM,
        TASK,
        *turn("Look around.", "ls\n", "a.py"),
        *turn("Open it.", "open a.py\n", "1:import os"),
        *turn("Done.", "submit\n", None),
    ]
    path = write(
        "run.traj",
        {
            "environment": "swe_main",
            "trajectory": entries,
            "history": history,
            "info": {"exit_status": "submitted"},
        },
    )
    trajectory = load_trajectory(path)
    assert trajectory.format == "swe-agent"
    assert trajectory.root == [SYSTEM, TASK]
    assert [s.action for s in trajectory.steps] == ["ls", "open a.py", "submit"]
    assert [s.observation for s in trajectory.steps] == [
        "a.py",
        "1:import os",
        "",
    ]  # raw output, not the footer
    assert trajectory.steps[1].messages[1]["content"].endswith("bash-$")
    assert trajectory.meta["info"]["exit_status"] == "submitted"


def test_history_drift_leaves_unmatched_steps_without_messages(write):
    entries = [
        entry("a", "ls\n", "x"),
        entry("b", "edit 1:1\nbad\n", "syntax error"),
        entry("c", "cat a\n", "y"),
    ]
    history = [SYSTEM, TASK, *turn("a", "ls\n", "x"), *turn("c", "cat a\n", "y")]
    trajectory = load_trajectory(write("drift.traj", {"trajectory": entries, "history": history}))
    assert [len(s.messages) for s in trajectory.steps] == [2, 0, 2]
    assert trajectory.steps[2].messages[0]["action"] == "cat a\n"


def test_function_calling_history_only(write):
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "bash", "arguments": '{"command": "pytest -q"}'},
    }
    history = [
        {**SYSTEM, "message_type": "system_prompt"},
        {**TASK, "message_type": "observation"},
        {
            "role": "assistant",
            "content": "Run tests.",
            "thought": "Run tests.",
            "action": "pytest -q",
            "tool_calls": [call],
            "message_type": "action",
        },
        {
            "role": "tool",
            "content": "1 failed, 3 passed",
            "tool_call_ids": ["call_1"],
            "message_type": "observation",
        },
    ]
    path = write("fc.traj", {"history": history})
    assert detect_format(path) == "swe-agent"
    (step,) = load_trajectory(path).steps
    assert (step.thought, step.action, step.observation) == ("Run tests.", "pytest -q", "1 failed, 3 passed")
    assert step.messages[1]["tool_call_id"] == "call_1"  # OpenAI key added for the single id
    assert step.messages[1]["tool_call_ids"] == ["call_1"]


@pytest.mark.data
def test_shared_demonstrations_round_trip(shared):
    paths = sorted(shared("swe-agent", "demonstrations").glob("*.traj"))
    assert len(paths) >= 15
    for path in paths:
        document = json.loads(path.read_text(encoding="utf-8"))
        trajectory = load_trajectory(path)
        assert trajectory.format == "swe-agent", path
        entries = document.get("trajectory") or []
        if entries:
            assert len(trajectory.steps) == len(entries), path
            for key in ("thought", "observation"):
                assert sum(len(getattr(s, key)) for s in trajectory.steps) == sum(
                    len(e[key] or "") for e in entries
                ), path
            assert sum(len(s.action) for s in trajectory.steps) == sum(
                len(e["action"].strip()) for e in entries
            ), path
            matched = sum(1 for s in trajectory.steps if s.messages)
            assert matched >= len(entries) - 1, path
        else:
            assistants = [m for m in document["history"] if m["role"] == "assistant"]
            assert len(trajectory.steps) == len(assistants), path
            assert all(s.messages[0]["tool_calls"] for s in trajectory.steps), path
            assert all(m.get("tool_call_id") for s in trajectory.steps for m in s.messages[1:]), path
        assert trajectory.task and trajectory.root[0]["role"] == "system", path
