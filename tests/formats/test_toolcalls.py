"""The one public builder of a Step from chat tool-call messages."""

from __future__ import annotations

from contextweaver.formats import chat_step
from contextweaver.formats.minisweagent import text_step


def _call(call_id: str, name: str, arguments: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_results_follow_call_order_and_pairing_gaps_are_reported() -> None:
    assistant = {
        "role": "assistant",
        "content": "look first",
        "tool_calls": [_call("a", "bash", '{"command": "ls"}'), _call("b", "read", '{"path": "x.py"}')],
    }
    results = [
        {"role": "tool", "tool_call_id": "b", "content": "print(1)"},
        {"role": "tool", "tool_call_id": "zz", "content": "stray"},
    ]
    step = chat_step([assistant, *results])
    assert step.thought == "look first"
    assert step.action == 'ls\nread {"path": "x.py"}'
    assert step.observation.startswith("print(1)")
    assert step.meta == {"orphan_results": ["zz"], "unpaired_tool_calls": ["a"]}
    assert step.messages == (assistant, *results)


def test_text_protocol_and_tool_calling_share_the_builder() -> None:
    assistant = {"role": "assistant", "content": None, "tool_calls": [_call("c", "bash", '{"command": "pwd"}')],
                 "extra": {"raw": 1}}  # fmt: skip
    result = {"role": "tool", "tool_call_id": "c", "content": "/repo"}
    step = text_step(assistant, [result], 7)
    assert step.action == "pwd" and step.observation == "/repo"
    assert step.meta == {"message_index": 7}
    assert "extra" not in step.messages[0]


def test_shell_commands_of_codex_tools_read_as_the_command_line() -> None:
    from contextweaver.formats.toolcalls import action_text

    assert (
        action_text("shell", '{"command": ["bash", "-lc", "ls -la"], "workdir": "/r", "timeout_ms": 1}')
        == "ls -la"
    )
    assert action_text("shell", '{"command": ["git", "diff", "a b"]}') == "git diff 'a b'"
    assert (
        action_text(
            "exec_command",
            '{"cmd": "pytest -q", "workdir": "/r", "yield_time_ms": 1, "max_output_tokens": 9}',
        )
        == "pytest -q"
    )
    assert action_text("str_replace_editor", '{"command": "view", "path": "a.py"}').startswith(
        "str_replace_editor {"
    )
