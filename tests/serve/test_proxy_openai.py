"""The proxy with the official openai client as the caller and a real local upstream server.

The upstream must receive the woven messages (what a ContextWeaver fed the same steps produces),
the caller must receive the upstream's answer unchanged, streams included.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from contextweaver.config import WeaverConfig
from contextweaver.records import PLACEHOLDER
from contextweaver.serve import read_conversation
from contextweaver.store.sqlite import SQLiteStore
from contextweaver.testing.fake_server import FakeLLMServer, Reply, Request
from contextweaver.weaver import ContextWeaver
from tests.serve.harness import PER_STEP, run_tool, running_proxy, task, tool_call_reply

TOOLS = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]
SECRET = "sk-test-do-not-store-4f9a1c"


def expected_upstream_messages(
    sent: list[dict[str, Any]], config: WeaverConfig | None = None
) -> list[dict[str, Any]]:
    """What ContextWeaver itself weaves from the caller's history (the proxy must send exactly this)."""
    conversation = read_conversation(sent)
    weaver = ContextWeaver(config or PER_STEP)
    weaver.begin(conversation.root)
    for step in conversation.steps:
        weaver.add_step(step)
    return [*weaver.context().messages, *conversation.pending]


def agent_loop(client: openai.OpenAI, messages: list[dict[str, Any]], marker: str, steps: int) -> list[Any]:
    """A tool-calling agent: ask, run the requested calls, append the results, ask again."""
    sent = []
    for _ in range(steps):
        sent.append(json.loads(json.dumps(messages)))
        completion = client.chat.completions.create(model="fake", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
        message = completion.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls or []:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": run_tool(call.function.arguments, marker)})  # type: ignore[union-attr]  # fmt: skip
    return sent


def test_upstream_receives_the_woven_messages(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with (
        FakeLLMServer(tool_call_reply) as upstream,
        running_proxy(SQLiteStore(tmp_path / "s.db"), upstream.base_url) as (url, _),
    ):
        client = openai.OpenAI(base_url=url, api_key=SECRET, max_retries=0)
        messages = task("alpha-001")
        sent = agent_loop(client, messages, "alpha-001", 12)
        assert len(upstream.requests) == 12
        for request, history in zip(upstream.requests, sent, strict=True):
            assert request.body["messages"] == expected_upstream_messages(history)
            assert request.headers["authorization"] == f"Bearer {SECRET}"
            assert request.body["tools"] == TOOLS and request.body["model"] == "fake"
        last = upstream.requests[-1].body["messages"]
        placeholders = [
            m for m in last if m.get("role") == "tool" and m["content"].startswith(PLACEHOLDER[:20])
        ]
        assert placeholders, "old observations are compressed after the warmup"
        assert len(json.dumps(last)) < len(json.dumps(sent[-1]))
        assert all(m["role"] != "tool" or m["content"].startswith(("file_", "Old")) for m in last)
    assert SECRET.encode() not in (tmp_path / "s.db").read_bytes() + _wal(tmp_path / "s.db")
    assert SECRET not in caplog.text


def _wal(path: Path) -> bytes:
    wal = path.with_name(path.name + "-wal")
    return wal.read_bytes() if wal.exists() else b""


def test_the_answer_comes_back_byte_for_byte(tmp_path: Path) -> None:
    odd = b'{ "id":"x-1",  "object":"chat.completion","created":1,"model":"m",\n "choices":[{"index":0,"message":{"role":"assistant","content":"caf\\u00e9 \xe2\x9c\x93"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3},"x_vendor":[1,2]}'

    def reply(request: Request) -> Reply:
        return Reply(body=odd, headers={"content-type": "application/json", "x-request-id": "req-42"})

    with (
        FakeLLMServer(reply) as upstream,
        running_proxy(SQLiteStore(tmp_path / "s.db"), upstream.base_url) as (url, _),
    ):
        answer = httpx.post(
            f"{url}/chat/completions", json={"model": "m", "messages": task("beta")}, timeout=30
        )
        assert answer.status_code == 200 and answer.content == odd
        assert answer.headers["x-request-id"] == "req-42"
        completion = openai.OpenAI(base_url=url, api_key="k", max_retries=0).chat.completions.create(
            model="m",
            messages=task("beta"),  # type: ignore[arg-type]
        )
        assert completion.choices[0].message.content == "caf\u00e9 \u2713"


def test_streaming_passes_the_event_stream_through_unchanged(tmp_path: Path) -> None:
    events = [
        {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
         "choices": [{"index": 0, "delta": {"role": "assistant", "content": piece}, "finish_reason": None}]}
        for piece in ("Wea", "ving ", "works \u2713")
    ]  # fmt: skip
    stream = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"

    def reply(request: Request) -> Reply:
        return Reply(body=stream, headers={"content-type": "text/event-stream"})

    with (
        FakeLLMServer(reply) as upstream,
        running_proxy(SQLiteStore(tmp_path / "s.db"), upstream.base_url) as (url, _),
    ):
        messages = [*task("gamma"), {"role": "assistant", "content": None, "tool_calls": [
            {"id": "t1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}]},
            {"role": "tool", "tool_call_id": "t1", "content": "README.md\nsrc"}]  # fmt: skip
        with httpx.stream("POST", f"{url}/chat/completions", timeout=30,
                          json={"model": "m", "messages": messages, "stream": True}) as raw:  # fmt: skip
            assert raw.headers["content-type"].startswith("text/event-stream")
            assert raw.read() == stream
            assert raw.headers["x-contextweaver-session"].startswith("auto-")
        client = openai.OpenAI(base_url=url, api_key="k", max_retries=0)
        pieces = [
            chunk.choices[0].delta.content or ""
            for chunk in client.chat.completions.create(model="m", messages=messages, stream=True)  # type: ignore[arg-type]
        ]
        assert "".join(pieces) == "Weaving works \u2713"
        assert upstream.requests[-1].body["stream"] is True


def test_streaming_from_the_default_fake_server(tmp_path: Path) -> None:
    with (
        FakeLLMServer() as upstream,
        running_proxy(SQLiteStore(tmp_path / "s.db"), upstream.base_url) as (url, _),
    ):
        client = openai.OpenAI(base_url=url, api_key="k", max_retries=0)
        chunks = list(client.chat.completions.create(model="m", messages=task("delta"), stream=True,  # type: ignore[arg-type]
                                                     stream_options={"include_usage": True}))  # fmt: skip
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        direct = openai.OpenAI(base_url=upstream.base_url, api_key="k").chat.completions.create(
            model="m",
            messages=task("delta"),  # type: ignore[arg-type]
        )
        assert text == direct.choices[0].message.content and text
        assert chunks[-1].usage is not None


def test_models_and_upstream_errors_pass_through(tmp_path: Path) -> None:
    def reply(request: Request) -> Reply:
        return Reply(status=429, body={"error": {"message": "slow down", "type": "rate_limit"}},
                     headers={"retry-after": "7", "content-type": "application/json"})  # fmt: skip

    with (
        FakeLLMServer(reply, model="upstream-model") as upstream,
        running_proxy(SQLiteStore(tmp_path / "s.db"), upstream.base_url) as (url, _),
    ):
        client = openai.OpenAI(base_url=url, api_key="k", max_retries=0)
        assert [m.id for m in client.models.list()] == ["upstream-model"]
        with pytest.raises(openai.RateLimitError, match="slow down") as caught:
            client.chat.completions.create(model="m", messages=task("eps"))  # type: ignore[arg-type]
        assert caught.value.response.headers["retry-after"] == "7"
        direct = httpx.post(
            f"{upstream.base_url}/chat/completions", json={"model": "m", "messages": task("eps")}
        )
        via = httpx.post(f"{url}/chat/completions", json={"model": "m", "messages": task("eps")})
        assert (via.status_code, via.content) == (direct.status_code, direct.content)


def test_an_unreachable_upstream_is_a_clear_502(tmp_path: Path) -> None:
    with running_proxy(SQLiteStore(tmp_path / "s.db"), "http://127.0.0.1:9/v1") as (url, _):
        answer = httpx.post(f"{url}/chat/completions", json={"model": "m", "messages": task("z")}, timeout=30)
        assert answer.status_code == 502
        assert "cannot reach the upstream" in answer.json()["error"]["message"]
