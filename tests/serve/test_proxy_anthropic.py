"""Anthropic Messages through the proxy, with the official `anthropic` client and a local upstream.

The upstream must receive what ContextWeaver weaves from the same history (tool_use/tool_result
blocks paired, old results compressed under the budget), the caller's key and version headers,
and the caller's cache_control breakpoints where the caller put them, though they move every turn.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import openai
from click.testing import CliRunner

from contextweaver.cli import main
from contextweaver.records import PLACEHOLDER
from contextweaver.serve.wires.anthropic import MESSAGES
from contextweaver.store.session import Session
from contextweaver.store.sqlite import SQLiteStore
from contextweaver.testing.fake_server import FakeLLMServer, Reply, Request
from contextweaver.testing.fake_wire import anthropic_message
from tests.serve.harness import run_tool, running_proxy
from tests.serve.wire_expect import PER_STEP, woven_field

SECRET = "sk-ant-test-never-stored-77c1"
SYSTEM = [
    {
        "type": "text",
        "text": "You are a coding agent. Call bash once per turn.",
        "cache_control": {"type": "ephemeral"},
    }
]
TOOLS = [{"name": "bash", "description": "run a command", "input_schema": {"type": "object"}}]
EPHEMERAL = {"type": "ephemeral"}


def claude_reply(request: Request) -> Reply:
    """One text block and one bash call per turn, named after the request's length and marker."""
    messages = request.body["messages"]
    marker = messages[0]["content"][0]["text"].split()[-1]
    n = len(messages)
    blocks = [{"type": "text", "text": f"Looking at file_{n}."},
              {"type": "tool_use", "id": f"toolu_{n:03d}", "name": "bash", "input": {"command": f"cat file_{n}.py  # {marker}"}}]  # fmt: skip
    return Reply(body=anthropic_message(request.body["model"], blocks))


def agent_loop(client: anthropic.Anthropic, messages: list[dict[str, Any]], marker: str, turns: int,
               stream: bool = False) -> list[dict[str, Any]]:  # fmt: skip
    """Claude Code's loop: ask, run the calls, send the results with a breakpoint on the newest block."""
    sent = []
    for _ in range(turns):
        sent.append(json.loads(json.dumps(messages)))
        request = dict(model="claude-test", max_tokens=256, system=SYSTEM, messages=messages, tools=TOOLS)
        if stream:
            with client.messages.stream(**request) as events:  # type: ignore[arg-type]
                answer = events.get_final_message()
        else:
            answer = client.messages.create(**request)  # type: ignore[arg-type]
        messages.append(
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in answer.content]}
        )
        for message in messages:  # the breakpoint moves to the newest block
            for block in message["content"] if isinstance(message["content"], list) else ():
                block.pop("cache_control", None)
        results = [{"type": "tool_result", "tool_use_id": b.id, "content": run_tool(json.dumps(b.input), marker)}
                   for b in answer.content if b.type == "tool_use"]  # fmt: skip
        results[-1]["cache_control"] = EPHEMERAL
        messages.append({"role": "user", "content": results})
    return sent


def claude_client(url: str) -> anthropic.Anthropic:
    """A client that authenticates as Claude Code does, with `x-api-key`."""
    return anthropic.Anthropic(base_url=url.removesuffix("/v1"), api_key=None, max_retries=0,
                               default_headers={"x-api-key": SECRET})  # fmt: skip


def task(marker: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": [{"type": "text", "text": f"Fix the failing test. Marker {marker}"}]}]


def expected_upstream(sent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return woven_field(MESSAGES, {"messages": sent, "system": SYSTEM})  # type: ignore[no-any-return]


def check_pairing(messages: list[dict[str, Any]]) -> None:
    for position, message in enumerate(messages):
        calls = [
            b["id"] for b in message["content"] if message["role"] == "assistant" and b["type"] == "tool_use"
        ]
        if calls:
            answer = messages[position + 1]["content"]
            assert [b["tool_use_id"] for b in answer if b["type"] == "tool_result"] == calls


def test_messages_are_woven_with_blocks_headers_and_breakpoints_kept(tmp_path: Path) -> None:
    with (
        FakeLLMServer(claude_reply) as upstream,
        running_proxy(SQLiteStore(tmp_path / "s.db"), upstream.base_url, PER_STEP) as (url, manager),
    ):
        messages = task("anth-001")
        sent = agent_loop(claude_client(url), messages, "anth-001", 8)
        sessions = manager.store.sessions()
    received = [r for r in upstream.requests if r.path.startswith("/v1/messages")]
    assert len(received) == 8 and len(sessions) == 1  # a moving breakpoint is not a new history
    for request in received:
        assert request.headers["x-api-key"] == SECRET and request.headers["anthropic-version"]
        assert request.body["system"] == SYSTEM and request.body["tools"] == TOOLS
        check_pairing(request.body["messages"])
    last = received[-1].body["messages"]
    assert last == expected_upstream(sent[-1])
    assert last[-1]["content"][-1]["cache_control"] == EPHEMERAL
    assert sum(json.dumps(m).count("cache_control") for m in last) == 1
    compressed = [b for m in last for b in m["content"] if b["type"] == "tool_result" and b.get("content", "").startswith(PLACEHOLDER.split("(")[0])]  # fmt: skip
    assert compressed, "results outside the window and the ancestry are compressed"
    assert sessions[0].steps == 7  # the last turn's results were never sent


def test_streaming_through_the_proxy_and_the_stored_session_replays(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with (
        FakeLLMServer(claude_reply) as upstream,
        running_proxy(SQLiteStore(path), upstream.base_url, PER_STEP) as (url, manager),
    ):
        messages = task("anth-002")
        sent = agent_loop(claude_client(url), messages, "anth-002", 5, stream=True)
        session_id = manager.store.sessions()[0].id
        counted = claude_client(url).messages.count_tokens(model="claude-test", messages=messages)  # type: ignore[arg-type]
    assert messages[-2]["content"][1]["input"] == {
        "command": "cat file_9.py  # anth-002"
    }  # streamed tool_use
    assert all(m["role"] == "assistant" for m in messages[1::2]) and len(messages) == 11
    assert upstream.requests[-2].body["stream"] is True
    assert len(SQLiteStore(path).steps(session_id)) == 4
    assert counted.input_tokens > 0 and upstream.requests[-1].path == "/v1/messages/count_tokens"
    assert upstream.requests[-2].body["messages"] == expected_upstream(sent[-1])
    assert Session.open(SQLiteStore(path), session_id).context().messages[-1]["role"] == "tool"
    out = tmp_path / "session.json"
    runner = CliRunner()
    exported = runner.invoke(
        main,
        ["sessions", "export", "--store", str(path), session_id, "--format", "messages", "--out", str(out)],
    )
    assert exported.exit_code == 0, exported.output
    replayed = runner.invoke(main, ["replay", str(out), "--json", "--strategy", "cw,full"])
    assert replayed.exit_code == 0, replayed.output
    assert len(replayed.output.splitlines()) == 4


def test_a_bad_block_list_is_a_400_in_anthropic_shape(tmp_path: Path) -> None:
    with FakeLLMServer(claude_reply) as upstream, running_proxy(SQLiteStore(tmp_path / "s.db"), upstream.base_url, PER_STEP) as (url, _):  # fmt: skip
        client = claude_client(url)
        try:
            client.messages.create(
                model="m", max_tokens=8, messages=[{"role": "user", "content": [{"text": "no type"}]}]
            )  # type: ignore[list-item]
        except anthropic.BadRequestError as exc:
            assert "content blocks with 'type'" in str(exc)
            assert exc.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]
        else:
            raise AssertionError("expected a 400")
    assert not upstream.requests


def test_in_the_default_lazy_mode_an_unfilled_context_goes_upstream_as_sent(tmp_path: Path) -> None:
    with (
        FakeLLMServer(claude_reply) as upstream,
        running_proxy(SQLiteStore(tmp_path / "s.db"), upstream.base_url) as (url, manager),
    ):
        messages = task("anth-003")
        sent = agent_loop(claude_client(url), messages, "anth-003", 5)
        assert manager.store.sessions()[0].steps == 4  # stored all the same
    assert [r.body["messages"] for r in upstream.requests] == sent  # byte-for-byte blocks and breakpoints


def test_a_sessions_listing_names_the_wire_it_came_on(tmp_path: Path) -> None:
    """Claude Code's and Codex's sessions were listed as `format openai` (issue 53)."""
    from tests.serve import test_proxy_responses as codex  # it imports this module: not at the top

    db = tmp_path / "s.db"
    with (
        FakeLLMServer(
            lambda r: claude_reply(r) if r.path.endswith("/messages") else codex.codex_reply(r)
        ) as upstream,
        running_proxy(SQLiteStore(db), upstream.base_url, PER_STEP) as (url, _),
    ):
        agent_loop(claude_client(url), task("wire-a"), "wire-a", 3)
        codex.agent_loop(openai.OpenAI(base_url=url, api_key="sk-codex", max_retries=0), codex.task("wire-b"),
                         "wire-b", 3)  # fmt: skip
    formats = sorted(info.format or "-" for info in SQLiteStore(db).sessions())
    assert formats == ["anthropic", "responses"], formats
    listed = CliRunner().invoke(main, ["sessions", "list", "--store", str(db), "--json"])
    assert sorted(s["format"] for s in json.loads(listed.output)) == ["anthropic", "responses"], listed.output
