"""Shapes the real Claude Code and Codex CLIs send (tests/clis drives the CLIs themselves), at the wire.

System messages inside Anthropic `messages`, message fields no document lists, tool results whose
fields must survive weaving, Codex's `additional_tools` item, provider compaction items; and the
guards that keep a budget from starving the agent into a loop.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from contextweaver import BudgetError, ContextWeaver, Step, WeaverConfig
from contextweaver.cli import main
from contextweaver.records import PLACEHOLDER
from contextweaver.serve.sessions.loop_guard import LIMIT, LoopGuard
from contextweaver.serve.wires import anthropic as wire
from contextweaver.serve.wires import responses

TASK = {"role": "user", "content": [{"type": "text", "text": "fix calc.py"}]}
ENVIRONMENT = {
    "role": "system",
    "content": "# Environment\ncwd: /repo",
    "output_config": {"effort": "medium"},
}


def call(n: int) -> dict:
    return {"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{n}", "name": "Bash",
                                              "input": {"command": f"cat file_{n}.py"}}]}  # fmt: skip


def result(n: int, text: str) -> dict:
    return {"role": "user", "content": [{"tool_use_id": f"toolu_{n}", "type": "tool_result", "content": text,
                                         "is_error": False, "x_unknown": n}]}  # fmt: skip


REMINDER = {"role": "system", "content": "The user hasn't heard from you in a while."}
MESSAGES = [TASK, ENVIRONMENT, call(1), result(1, "a\n" * 50), call(2), result(2, "b\n" * 50), REMINDER,
            call(3), result(3, "c")]  # fmt: skip


def test_system_messages_are_root_or_asides_and_go_back_where_they_were() -> None:
    conversation, state = wire.read({"messages": MESSAGES}, "auto")
    assert [m["role"] for m in conversation.root] == ["user", "system"]  # the environment block is root
    assert len(conversation.steps) == 3 and all(
        "hasn't heard" not in s.observation for s in conversation.steps
    )
    assert state.as_sent  # rendering gives back the very messages: the body may go as it came
    payload: dict = {}
    wire.write(payload, conversation.messages, state)
    assert payload["messages"] == MESSAGES


def test_an_aside_whose_message_was_cut_goes_after_the_root_and_a_woven_result_keeps_its_fields() -> None:
    conversation, state = wire.read({"messages": MESSAGES}, "auto")
    chat = conversation.messages
    tool_of_2 = next(i for i, m in enumerate(chat) if m.get("tool_call_id") == "toolu_2")
    woven = [
        m for m in chat if m.get("tool_call_id") != "toolu_1" and "toolu_1" not in str(m.get("tool_calls"))
    ]
    woven = [{**m, "content": PLACEHOLDER.format(lines=50)} if m is chat[tool_of_2] else m for m in woven]
    payload: dict = {}
    wire.write(payload, woven, state)
    out = payload["messages"]
    assert out[1] == ENVIRONMENT  # fields of its own kept
    compressed = next(b for m in out for b in m["content"] if isinstance(m["content"], list)
                      and b.get("tool_use_id") == "toolu_2")  # fmt: skip
    assert compressed == {"tool_use_id": "toolu_2", "type": "tool_result", "content": PLACEHOLDER.format(lines=50),
                          "is_error": False, "x_unknown": 2}  # fmt: skip
    assert out.index(REMINDER) == out.index(call(3)) - 1  # still right before the call it preceded
    # its message cut, an aside goes right after the root
    without_3 = [
        m for m in woven if m.get("tool_call_id") != "toolu_3" and "toolu_3" not in str(m.get("tool_calls"))
    ]
    wire.write(payload, without_3, state)
    assert payload["messages"].index(REMINDER) == 2


def test_codex_additional_tools_and_developer_items_are_the_root() -> None:
    tools = {"type": "additional_tools", "id": "at_1", "role": "developer", "tools": [{"type": "namespace",
             "name": "functions", "tools": [{"type": "custom", "name": "exec", "description": "x" * 400}]}]}  # fmt: skip
    items = [tools, {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "rules"}]},
             {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix calc.py"}]},
             {"type": "custom_tool_call", "call_id": "c1", "name": "exec", "input": "await tools.exec_command({cmd: 'ls'})"},
             {"type": "custom_tool_call_output", "id": "o1", "call_id": "c1", "output": "calc.py"}]  # fmt: skip
    conversation, as_sent = responses.read({"input": items}, "auto")
    assert len(conversation.root) == 3 and len(conversation.steps) == 1
    assert "exec" in str(conversation.root[0]["content"])  # the tool list counts toward the root's tokens
    payload: dict = {}
    compressed = [{**m, "content": "gone"} if m.get("role") == "tool" else m for m in conversation.messages]
    responses.write(payload, compressed, as_sent)
    assert payload["input"][:4] == items[:4]
    assert payload["input"][4] == {**items[4], "output": "gone"}  # the output item keeps its id


def test_provider_compaction_goes_through_unwoven() -> None:
    assert wire.MESSAGES.passthrough({"messages": [TASK, {"role": "assistant", "content": [
        {"type": "compaction", "content": "summary"}]}]}) == "compaction"  # fmt: skip
    assert wire.MESSAGES.passthrough({"messages": MESSAGES}) is None
    assert (
        responses.RESPONSES.passthrough({"input": [{"type": "compaction", "encrypted_content": "x"}]})
        == "compaction"
    )


def test_a_budget_that_cannot_hold_the_newest_step_is_refused_not_starved() -> None:
    weaver = ContextWeaver(WeaverConfig())
    weaver.begin([{"role": "system", "content": "word " * 1000}, {"role": "user", "content": "task"}])
    weaver.add_step(Step(thought="t", action="ls", observation="out " * 300))
    with pytest.raises(BudgetError, match="raise the budget to at least"):
        weaver.context(max_tokens=1100)
    context = weaver.context(max_tokens=1400)
    assert context.decisions[-1].mode in ("full", "trimmed")


def test_the_loop_guard_stops_after_the_same_newest_step_arrives_limit_times() -> None:
    guard = LoopGuard()
    assert not any(guard.looping("s", "same") for _ in range(LIMIT - 1))
    assert guard.looping("s", "same") and guard.stopped == 1
    assert not guard.looping("s", "other") and not guard.looping("t", "same")


def test_serve_refuses_a_budget_that_is_not_positive() -> None:
    result = CliRunner().invoke(main, ["serve", "--upstream", "http://127.0.0.1:9/v1", "--budget", "-5"])
    assert result.exit_code == 2 and "--budget" in result.output


@pytest.mark.parametrize("field", ["type", "role"])
@pytest.mark.parametrize("value", [["message"], {"a": 1}, 3])
def test_an_item_type_or_role_that_is_not_a_string_is_a_400_naming_it(field: str, value: object) -> None:
    item = {"type": "message", "role": "user", "content": "hi", field: value}
    with pytest.raises(responses.BadConversation, match=rf"input\[0\]\.{field} must be a string"):
        responses.read({"input": [item]}, "auto")


def test_tool_definitions_count_against_the_proxy_budget(tmp_path) -> None:  # noqa: ANN001
    from contextweaver.config import WeaverConfig
    from contextweaver.serve.sessions.build import build_manager
    from contextweaver.serve.sessions.routing import BudgetTooSmall
    from contextweaver.serve.wires.wire import tool_tokens

    tools = [{"name": f"tool_{n}", "description": "does a thing " * 40, "input_schema": {"type": "object"}}
             for n in range(20)]  # fmt: skip
    payload = {"messages": [TASK], "tools": tools}
    reserved = tool_tokens(payload)
    assert reserved > 2000 and tool_tokens({"messages": [TASK]}) == 0
    conversation, _ = wire.read(payload, "auto")
    conversation.reserved = reserved
    manager = build_manager(str(tmp_path / "s.db"), WeaverConfig(), budget=reserved // 2)
    with pytest.raises(BudgetTooSmall, match="tool definitions"):
        manager.weave(conversation, None, None)
    roomy = build_manager(str(tmp_path / "t.db"), WeaverConfig(), budget=reserved + 500)
    assert roomy.weave(conversation, None, None).context is None  # no step yet: it goes out as sent
