from __future__ import annotations

import json

import pytest

from contextweaver.formats import TrajectoryError, load_trajectory
from contextweaver.formats.base import Trajectory
from contextweaver.formats.jsonl import dump_steps
from contextweaver.records import Step


def lines(*objects: object) -> str:
    return "".join(json.dumps(o) + "\n" for o in objects)


def test_root_header_and_steps(write):
    root = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "fix it"}]
    messages = [
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    path = write(
        "run.jsonl",
        lines(
            {"type": "root", "messages": root},
            {"thought": "look", "action": "ls", "observation": "a.py", "messages": messages},
            {"observation": "Stop and explain first.", "kind": "user"},
            {"thought": "t", "action": "cat a.py", "observation": "", "images": 2},
        ),
    )
    trajectory = load_trajectory(path)
    assert trajectory.format == "jsonl"
    assert trajectory.root == root
    assert [s.kind for s in trajectory.steps] == ["agent", "user", "agent"]
    assert trajectory.steps[0].messages == tuple(messages)
    assert trajectory.steps[2].images == 2
    assert [s.meta["line"] for s in trajectory.steps] == [2, 3, 4]


def test_system_task_header(write):
    path = write(
        "run.jsonl", lines({"system": "S", "task": "T"}, {"thought": "a", "action": "b", "observation": "c"})
    )
    trajectory = load_trajectory(path)
    assert trajectory.system == "S" and trajectory.task == "T"
    assert trajectory.steps == [Step("a", "b", "c")]


def test_headerless_single_step_file_is_detected(write):
    path = write("one.json", json.dumps({"thought": "a", "action": "b", "observation": "c"}))
    trajectory = load_trajectory(path)
    assert trajectory.root == [] and len(trajectory.steps) == 1


def test_dump_then_load_round_trips(tmp_path):
    original = Trajectory(
        root=[{"role": "user", "content": "task ü"}],
        steps=[Step("t1", "a1", "o1"), Step(observation="hey", kind="user"), Step("t3", "a3", "", images=1)],
    )
    path = tmp_path / "out.jsonl"
    dump_steps(path, original)
    loaded = load_trajectory(path)
    assert loaded.root == original.root
    assert loaded.steps == original.steps


@pytest.mark.parametrize(
    ("body", "where", "what"),
    [
        (lines({"system": "s"}, {"thought": "a"}) + '{"thought": "trunc', "line 3", "invalid JSON"),
        (lines({"system": "s"}, {"thought": ["a"]}), "line 2", "'thought' must be a string"),
        (lines({"system": "s"}, {"thought": "a", "kind": "robot"}), "line 2", "'kind'"),
        (lines({"system": "s"}, {"thought": "a", "images": -1}), "line 2", "'images'"),
        (lines({"type": "root", "messages": "nope"}, {"thought": "a"}), "line 1", "'messages'"),
    ],
)
def test_bad_lines_name_file_and_line(write, body, where, what):
    path = write("bad.jsonl", body)
    with pytest.raises(TrajectoryError) as info:
        load_trajectory(path)
    assert str(path) in str(info.value)
    assert where in str(info.value) and what in str(info.value)


def test_non_utf8_bytes_are_replaced(write):
    path = write(
        "latin.jsonl",
        b'{"task": "caf\xe9"}\n{"thought": "x", "action": "cat f", "observation": "\xff\xfe ok"}\n',
    )
    trajectory = load_trajectory(path)
    assert trajectory.task == "caf\ufffd"
    assert trajectory.steps[0].observation == "\ufffd\ufffd ok"
