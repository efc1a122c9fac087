"""Tool-call arguments nested far deeper than json.loads can follow are text, never a crash."""

from __future__ import annotations

from contextweaver.formats import anthropic, responses
from contextweaver.formats.toolcalls import action_text

DEEP = "[" * 100_000 + "]" * 100_000


def test_deep_arguments_are_read_as_text() -> None:
    assert action_text("bash", DEEP).startswith("bash [[[")
    assert str(responses.output_content({"output": '{"output":' + DEEP + "}"})).startswith('{"output":[[')
    call = {"id": "c", "function": {"name": "bash", "arguments": DEEP}}
    (message,) = anthropic.from_chat([{"role": "assistant", "content": "", "tool_calls": [call]}])
    assert message["content"][-1]["input"] == {}
