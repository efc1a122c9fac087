"""An Anthropic Messages request body (as a proxy or an SDK logs it) is read as a run, never as a
ContextWeaver JSON Lines header with no step."""

from __future__ import annotations

import json

import pytest

from contextweaver.formats import TrajectoryError, detect_format, load_trajectory

SYSTEM = [{"type": "text", "text": "You are a coding agent."}]


def request(turns: int) -> dict:
    """A request after `turns` tool calls: thinking and text before the first, a result per call."""
    messages: list[dict] = [{"role": "user", "content": "Fix the failing test in calc.py"}]
    for n in range(1, turns + 1):
        blocks = [{"type": "tool_use", "id": f"tu{n}", "name": "bash", "input": {"command": f"cmd {n}"}}]
        if n == 1:
            blocks = [{"type": "thinking", "thinking": "look first", "signature": "sig"},
                      {"type": "text", "text": "Let me look."}, *blocks]  # fmt: skip
        messages.append({"role": "assistant", "content": blocks})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"tu{n}", "content": f"out {n}"}]})  # fmt: skip
    return {"model": "claude-x", "max_tokens": 1024, "system": SYSTEM, "messages": messages}


def test_a_request_body_is_a_run_of_its_tool_calls(write):
    path = write("request.json", request(2))
    assert detect_format(path) == "anthropic"
    run = load_trajectory(path)
    assert [m["role"] for m in run.root] == ["system", "user"]
    assert run.system == "You are a coding agent." and run.task == "Fix the failing test in calc.py"
    assert [(s.action, s.observation) for s in run.steps] == [("cmd 1", "out 1"), ("cmd 2", "out 2")]
    assert "look first" in run.steps[0].thought and "Let me look." in run.steps[0].thought
    assert run.steps[0].messages[0]["content"][0]["signature"] == "sig"  # blocks kept verbatim
    assert all("wire" not in m for m in run.root)  # the proxy's marker is not part of a recorded run
    assert run.meta["model"] == "claude-x"


def test_a_string_system_and_a_person_speaking_mid_run(write):
    body = request(1)
    body["system"] = "Be brief."
    body["messages"].append({"role": "user", "content": "also run the tests"})
    run = load_trajectory(write("request.json", body))
    assert run.system == "Be brief."
    assert [s.kind for s in run.steps] == ["agent", "user"]


def test_a_log_of_requests_is_read_as_its_longest_request(write):
    side_call = {"model": "claude-y", "max_tokens": 20, "messages": [{"role": "user", "content": "title?"}],
                 "system": "Write a title."}  # fmt: skip
    lines = [request(1), request(3), side_call]
    path = write("requests.jsonl", "".join(json.dumps(line) + "\n" for line in lines))
    run = load_trajectory(path)
    assert run.format == "anthropic" and len(run.steps) == 3 and run.meta["request_line"] == 2


def test_openai_chat_and_the_projects_own_header_are_not_taken(write):
    chat = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "t"},
                         {"role": "assistant", "content": None, "tool_calls": [
                             {"id": "c", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
                         {"role": "tool", "tool_call_id": "c", "content": "a.py"}]}  # fmt: skip
    assert detect_format(write("chat.json", chat)) == "openai"
    steps = json.dumps({"system": "s", "task": "t"}) + "\n" + json.dumps({"action": "ls", "observation": "a"})
    assert detect_format(write("run.jsonl", steps + "\n")) == "jsonl"


def test_a_bare_list_of_messages_is_read_as_anthropic_with_its_calls(write):
    """A script's dump of `messages` alone: read as OpenAI chat, it was 13 steps with every action empty."""
    path = write("messages.json", request(3)["messages"])
    assert detect_format(path) == "anthropic"
    run = load_trajectory(path)
    assert run.format == "anthropic" and run.task == "Fix the failing test in calc.py"
    assert [(s.action, s.observation, s.kind) for s in run.steps] == [
        ("cmd 1", "out 1", "agent"),
        ("cmd 2", "out 2", "agent"),
        ("cmd 3", "out 3", "agent"),
    ]


def test_the_openai_reader_refuses_anthropic_tool_blocks(write):
    path = write("messages.json", request(2)["messages"])
    with pytest.raises(
        TrajectoryError, match=r"messages\[1\] holds an Anthropic 'tool_use' block.*anthropic"
    ):
        load_trajectory(path, format="openai")
    wrapped = write("wrapped.json", {"messages": request(2)["messages"][1:]})  # no task: still not OpenAI's
    with pytest.raises(TrajectoryError, match="'tool_use' block"):
        load_trajectory(wrapped, format="openai")
