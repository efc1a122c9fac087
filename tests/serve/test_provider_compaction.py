"""Today's wires where the provider manages the context itself, through the proxy, compared byte for byte.

Codex compacts by sending a `compaction_trigger` input item on the ordinary `/responses` call and expects
exactly one `compaction` output item back; the history it then sends holds that item. Claude Code sends
Anthropic's `context_management` edits with every request, and the API's compaction returns `compaction`
blocks. A request holding a provider's compaction goes upstream as the client sent it and its answer comes
back as the upstream sent it, under a budget that cuts everything else; the edits field goes untouched.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from contextweaver.config import WeaverConfig
from contextweaver.store.sqlite import SQLiteStore
from contextweaver.testing.fake_server import FakeLLMServer, Reply, Request
from contextweaver.testing.fake_wire import anthropic_message, responses_object
from tests.serve.harness import running_proxy

CUTTING = WeaverConfig(mode="per_step")
COMPACTION_ITEM = {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAA-opaque-summary=="}
COMPACTED = json.dumps(responses_object("gpt-test", [COMPACTION_ITEM]), separators=(",", ":")).encode()
EDITS = {"edits": [{"type": "clear_thinking_20251015", "keep": "all"},
                   {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 3000}}]}  # fmt: skip
ANTHROPIC = {"anthropic-version": "2023-06-01", "x-api-key": "sk-ant-x", "content-type": "application/json"}


def reply(request: Request) -> Reply:
    """Codex's compaction answer for a trigger, else the next call of a tool-calling agent on either wire."""
    if request.path.endswith("/responses"):
        if any(item.get("type") == "compaction_trigger" for item in request.body["input"]):
            return Reply(body=COMPACTED, headers={"content-type": "application/json"})
        n = len(request.body["input"])
        call = {
            "type": "function_call",
            "call_id": f"call_{n}",
            "name": "bash",
            "arguments": '{"command":"ls"}',
        }
        return Reply(body=responses_object("gpt-test", [call]))
    n = len(request.body["messages"])
    use = {"type": "tool_use", "id": f"toolu_{n}", "name": "Bash", "input": {"command": f"cat f{n}.py"}}
    return Reply(body=anthropic_message("claude-test", [use]))


@pytest.fixture
def proxy(tmp_path: Path) -> Iterator[tuple[str, Any, FakeLLMServer]]:
    with FakeLLMServer(reply) as upstream, running_proxy(SQLiteStore(tmp_path / "s.db"), upstream.base_url, CUTTING, budget=1400) as (url, manager):  # fmt: skip
        yield url, manager, upstream


def codex_items(turns: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix the tests"}]}
    ]
    for n in range(turns):
        items += [{"type": "function_call", "call_id": f"c{n}", "name": "bash", "arguments": '{"command":"ls"}'},
                  {"type": "function_call_output", "call_id": f"c{n}", "output": f"file_{n}.py\n" * 80}]  # fmt: skip
    return items


def post(
    url: str, path: str, body: dict[str, Any], headers: dict[str, str] | None = None
) -> tuple[bytes, httpx.Response]:
    raw = json.dumps(body, separators=(", ", ": ")).encode()  # not the proxy's own encoding
    return raw, httpx.post(
        url + path, content=raw, headers=headers or {"content-type": "application/json"}, timeout=60
    )


def test_codex_compaction_trigger_and_its_compaction_pass_byte_for_byte(proxy: Any) -> None:
    url, manager, upstream = proxy
    body = {"model": "gpt-test", "instructions": "You are Codex.", "store": False, "input": codex_items(6)}
    post(url, "/responses", body)  # an ordinary request under this budget is cut
    assert upstream.requests[-1].body["input"] != body["input"]
    stored = manager.store.sessions()[0].steps
    trigger = {**body, "input": [*body["input"], {"type": "compaction_trigger"}]}
    sent, answer = post(url, "/responses", trigger)
    assert answer.status_code == 200 and answer.headers["x-contextweaver-passthrough"] == "compaction"
    assert upstream.requests[-1].raw == sent and answer.content == COMPACTED
    after = {**body, "input": [body["input"][0], COMPACTION_ITEM, *codex_items(7)[13:]]}
    sent, answer = post(url, "/responses", after)  # the compacted history: never cut below its compaction
    assert answer.status_code == 200 and upstream.requests[-1].raw == sent
    assert manager.store.sessions()[0].steps == stored  # nothing of either request is stored or woven


@pytest.mark.parametrize("kind", [["compaction"], {"type": "compaction"}, 7])
def test_a_responses_item_whose_type_is_not_a_string_is_a_400(proxy: Any, kind: Any) -> None:
    url, _, upstream = proxy
    before = len(upstream.requests)
    _, answer = post(url, "/responses", {"model": "m", "input": [*codex_items(1), {"type": kind}]})
    assert answer.status_code == 400 and "type must be a string" in answer.json()["error"]["message"], (
        answer.text
    )
    assert len(upstream.requests) == before


def claude_messages(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "fix the tests"}]}
    ]
    for n in range(turns):
        messages += [{"role": "assistant", "content": [{"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": "ls"}}]},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{n}", "content": f"file_{n}.py\n" * 80}]}]  # fmt: skip
    return messages


def test_anthropic_context_management_edits_go_untouched_and_compaction_byte_for_byte(proxy: Any) -> None:
    url, manager, upstream = proxy
    body = {"model": "claude-test", "max_tokens": 100, "system": "You are Claude Code.",
            "context_management": EDITS, "messages": claude_messages(6)}  # fmt: skip
    _, answer = post(url, "/messages", body, ANTHROPIC)
    woven = upstream.requests[-1].body
    assert answer.status_code == 200 and woven["messages"] != body["messages"]  # cut by the budget
    assert woven["context_management"] == EDITS and woven["system"] == body["system"]
    stored = manager.store.sessions()[0].steps
    summary = {
        "role": "assistant",
        "content": [{"type": "compaction", "content": "Summary: ran ls six times."}],
    }
    compacted = {**body, "messages": [body["messages"][0], summary, *claude_messages(7)[13:]]}
    sent, answer = post(url, "/messages", compacted, ANTHROPIC)
    assert answer.status_code == 200 and answer.headers["x-contextweaver-passthrough"] == "compaction"
    assert upstream.requests[-1].raw == sent
    assert manager.store.sessions()[0].steps == stored


def test_an_anthropic_block_whose_type_is_not_a_string_is_a_400_in_anthropics_shape(proxy: Any) -> None:
    url, _, upstream = proxy
    before = len(upstream.requests)
    bad = {"role": "user", "content": [{"type": ["compaction"], "content": "x"}]}
    _, answer = post(url, "/messages", {"model": "m", "max_tokens": 5, "messages": [bad]}, ANTHROPIC)
    assert answer.status_code == 400 and answer.json()["type"] == "error", answer.text
    assert len(upstream.requests) == before
