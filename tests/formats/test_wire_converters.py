"""Anthropic blocks and Responses items <-> chat messages: verbatim when untouched, valid when woven."""

from __future__ import annotations

import copy
from typing import Any

from contextweaver.formats import anthropic, responses
from contextweaver.formats.openai import chat_trajectory
from contextweaver.serve.wires.anthropic import MESSAGES

TOOL_USE = {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}}
CLAUDE: list[dict[str, Any]] = [
    {"role": "user", "content": "List the files."},
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "ls first", "signature": "sig=="},
            {"type": "text", "text": "Listing."},
            TOOL_USE,
        ],
    },  # fmt: skip
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py\nb.py", "is_error": True},
            {"type": "text", "text": "also check b.py"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}},
        ],
    },  # fmt: skip
]


def test_anthropic_round_trip_is_verbatim_and_pairs_calls() -> None:
    chat = anthropic.to_chat(copy.deepcopy(CLAUDE), system="be brief")
    assert [m["role"] for m in chat] == ["system", "user", "assistant", "tool", "user"]
    assert chat[2]["tool_calls"][0]["function"] == {"name": "bash", "arguments": '{"command": "ls"}'}
    root, steps = chat_trajectory(chat)
    assert steps[0].action == "ls" and steps[0].observation == "a.py\nb.py" and steps[1].images == 1
    assert anthropic.from_chat(chat) == CLAUDE


def test_anthropic_woven_messages_stay_valid() -> None:
    chat = anthropic.to_chat(copy.deepcopy(CLAUDE))
    chat[1] = {**chat[1], "content": "Listing (trimmed)."}  # an assistant text weaving trimmed
    chat[2] = {**chat[2], "content": "Old environment output: (2 lines omitted)"}
    chat.insert(1, {"role": "user", "content": "TEST STATUS: ✓ t: PASSED"})
    out = anthropic.from_chat(chat)
    assert [m["role"] for m in out] == ["user", "assistant", "user"]  # same roles in a row merged
    assert out[0]["content"][1]["text"].startswith("TEST STATUS")
    assert out[1]["content"] == [{"type": "text", "text": "Listing (trimmed)."}, TOOL_USE]
    assert out[2]["content"][0] == {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": True,
                                    "content": "Old environment output: (2 lines omitted)"}  # fmt: skip


def test_breakpoints_come_back_on_their_blocks_even_compressed() -> None:
    sent = copy.deepcopy(CLAUDE)
    sent[2]["content"][0]["cache_control"] = {"type": "ephemeral"}
    sent[0]["content"] = [
        {"type": "text", "text": "List the files.", "cache_control": {"type": "ephemeral", "ttl": "1h"}}
    ]
    conversation, marks = MESSAGES.read({"messages": sent}, "auto")
    assert "cache_control" not in str(conversation.root) + str([s.messages for s in conversation.steps])
    woven = [*conversation.root, *(m for s in conversation.steps for m in s.chat_messages())]
    woven[2] = {**woven[2], "content": "Old environment output: (2 lines omitted)"}
    payload: dict[str, Any] = {}
    MESSAGES.write(payload, woven, marks)
    assert payload["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    result = payload["messages"][2]["content"][0]
    assert result["cache_control"] == {"type": "ephemeral"} and result["content"].startswith(
        "Old environment"
    )


ITEMS: list[dict[str, Any]] = [
    {"role": "user", "content": "Fix it."},
    {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "look"}],
        "encrypted_content": "xx",
    },
    {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "c1",
        "name": "shell",
        "arguments": '{"command": ["ls"]}',
    },
    {"type": "function_call_output", "call_id": "c1", "output": "a.py"},
    {"type": "custom_tool_call", "call_id": "c2", "name": "apply_patch", "input": "*** Begin Patch"},
    {"type": "custom_tool_call_output", "call_id": "c2", "output": "Success."},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]},
]


def test_responses_round_trip_is_verbatim_and_pairs_calls() -> None:
    chat = responses.to_chat(copy.deepcopy(ITEMS), instructions="be brief")
    assert [m["role"] for m in chat] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    root, steps = chat_trajectory(chat)
    assert [s.action for s in steps] == ["ls", "apply_patch *** Begin Patch", ""]
    assert steps[0].thought == "look" and steps[-1].thought == "Done."
    assert responses.from_chat(chat) == ITEMS


def test_responses_compressed_output_keeps_its_item_type() -> None:
    chat = responses.to_chat(copy.deepcopy(ITEMS))
    chat[4] = {**chat[4], "content": "Old environment output: (1 lines omitted)"}
    out = responses.from_chat(chat)
    assert out[5] == {
        "type": "custom_tool_call_output",
        "call_id": "c2",
        "output": "Old environment output: (1 lines omitted)",
    }
    assert out[:5] == ITEMS[:5]
