from __future__ import annotations

import pytest

from contextweaver.formats import TrajectoryError, detect_format, load_trajectory

ROOT = [{"role": "system", "content": "You are a coding agent."}, {"role": "user", "content": "Fix test_x."}]


def call(call_id: str, name: str, arguments: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def result(call_id: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def test_parallel_tool_calls_stay_in_one_step_in_call_order(write):
    assistant = {
        "role": "assistant",
        "content": "Check both files.",
        "tool_calls": [
            call("a", "bash", '{"command": "cat x.py"}'),
            call("b", "read_file", '{"path": "y.py"}'),
        ],
    }
    messages = [
        *ROOT,
        assistant,
        result("b", "Y"),
        result("a", "X"),
        {"role": "assistant", "content": "Both read."},
    ]
    path = write("chat.json", messages)
    assert detect_format(path) == "openai"
    trajectory = load_trajectory(path)
    assert trajectory.root == ROOT
    first, second = trajectory.steps
    assert first.thought == "Check both files."
    assert first.action == 'cat x.py\nread_file {"path": "y.py"}'
    assert first.observation == "X\n\nY"
    assert first.messages == (assistant, result("b", "Y"), result("a", "X"))  # verbatim, source order kept
    assert (second.thought, second.action, second.observation) == ("Both read.", "", "")


def test_mid_run_user_message_is_a_user_step_and_messages_wrapper(write):
    messages = [*ROOT, {"role": "assistant", "content": "", "tool_calls": [call("a", "bash", '{"command": "ls"}')]}, result("a", "src"),
                {"role": "user", "content": "Stop: only touch src/."}, {"role": "assistant", "content": "OK."}]  # fmt: skip
    trajectory = load_trajectory(write("chat.json", {"model": "m", "messages": messages}))
    assert [s.kind for s in trajectory.steps] == ["agent", "user", "agent"]
    assert trajectory.steps[1].observation == "Stop: only touch src/."
    assert trajectory.meta == {"model": "m"}


def test_orphan_results_and_unpaired_calls_are_reported(write):
    messages = [
        *ROOT,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("a", "bash", "{}"), call("b", "bash", "{}")],
        },
        result("a", "ok"),
        result("zzz", "late"),
    ]
    (step,) = load_trajectory(write("chat.json", messages), format="openai").steps
    assert step.meta["orphan_results"] == ["zzz"]
    assert step.meta["unpaired_tool_calls"] == ["b"]
    assert len(step.messages) == 3  # the assistant message and both results, nothing dropped


def test_not_chat_messages(write):
    with pytest.raises(TrajectoryError, match=r"messages\[1\]"):
        load_trajectory(write("chat.json", [ROOT[0], "oops"]), format="openai")
