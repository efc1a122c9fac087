"""No input is read as nothing: a file that gives no step names itself, the format it was taken for,
the formats read and the nearest one; a mistyped key of the project's own JSON Lines is named with its
line and the key it was meant to be."""

from __future__ import annotations

import json

import pytest

from contextweaver.formats import FORMATS, NotATrajectory, TrajectoryError, load_trajectory

HEADER = json.dumps({"system": "You are a coding agent.", "task": "Fix the bug."})


def lines(*values: dict) -> str:
    return "".join(json.dumps(v) + "\n" for v in values)


def test_a_header_without_steps_is_an_error_naming_the_format_and_the_formats(write):
    path = write("run.jsonl", HEADER + "\n")
    with pytest.raises(TrajectoryError) as info:
        load_trajectory(path)
    message = str(info.value)
    assert str(path) in message and "read as jsonl" in message and "holds no steps" in message
    assert all(name in message for name in FORMATS.names())


def test_read_as_the_wrong_format_it_names_the_one_that_reads_it(write):
    request = {"system": "s", "messages": [
        {"role": "user", "content": "fix it"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "bash", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "ok"}]}]}  # fmt: skip
    path = write("request.json", request)
    with pytest.raises(TrajectoryError) as info:
        load_trajectory(path, format="jsonl")  # what detection chose before Anthropic requests were read
    assert "read as jsonl" in str(info.value)
    assert "nearest format: anthropic (it reads the file into steps)" in str(info.value)


@pytest.mark.parametrize("content", ["", "\n\n"])
def test_an_empty_file_names_itself(write, content):
    path = write("empty.jsonl", content)
    with pytest.raises(TrajectoryError) as info:
        load_trajectory(path)
    assert str(path) in str(info.value) and "expected" in str(info.value)


def test_mistyped_keys_are_named_with_their_line_and_the_key_meant(write):
    step = {"thougth": "look", "action": "ls", "observ": "a.py"}
    path = write("run.jsonl", HEADER + "\n" + lines({"thought": "t", "action": "pwd"}, step, step, step))
    run = load_trajectory(path)
    assert len(run.steps) == 4 and run.steps[1].thought == ""  # read past, not guessed
    assert run.warnings == [
        "line 3: unknown key 'thougth' (did you mean 'thought'?), and on 2 more line(s)",
        "line 3: unknown key 'observ' (did you mean 'observation'?), and on 2 more line(s)",
    ]


def test_an_unknown_key_with_no_near_one_is_still_named(write):
    path = write("run.jsonl", HEADER + "\n" + lines({"action": "ls", "exit_code": 0}))
    assert load_trajectory(path).warnings == ["line 2: unknown key 'exit_code' (read past)"]


def test_known_keys_give_no_warning(write):
    step = {
        "thought": "t",
        "action": "ls",
        "observation": "o",
        "images": 0,
        "kind": "agent",
        "meta": {"a": 1},
    }
    assert load_trajectory(write("run.jsonl", HEADER + "\n" + lines(step))).warnings == []


def test_steps_with_only_mistyped_keys_are_matched_to_the_format_meant(write):
    step = {"thougth": "look", "observ": "a.py"}  # no key a step has: no reader takes the file
    path = write("run.jsonl", HEADER + "\n" + lines(step, step))
    with pytest.raises(NotATrajectory) as info:
        load_trajectory(path)
    message = str(info.value)
    assert str(path) in message and "unrecognised trajectory" in message
    assert (
        "nearest format: jsonl (by its keys; mistyped: 'observ' for 'observation', 'thougth' for 'thought')"
        in message
    )
