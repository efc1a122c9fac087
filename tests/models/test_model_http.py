"""The OpenAI-compatible and Anthropic clients against a real local HTTP server (no mocks of the client)."""

from __future__ import annotations

import json
import time

import openai
import pytest

from contextweaver.config import ModelConfig
from contextweaver.models import (
    CircuitOpen,
    ModelRequestError,
    ModelResponseError,
    ModelTimeout,
    ModelUnavailable,
    build_model,
)
from contextweaver.testing.fake_server import FakeLLMServer, Reply, Request
from contextweaver.tokens import count_message, count_text

HELLO = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hi."}]


def client(server: FakeLLMServer, **settings: object) -> object:
    options = {
        "backend": "openai",
        "model": "memory-1",
        "base_url": server.base_url,
        "backoff": 0.01,
    } | settings
    return build_model(ModelConfig.model_validate(options))


def scripted(*replies: Reply | str):
    queue = list(replies)
    return lambda request: queue.pop(0) if queue else "done"


def test_completion_reports_usage_and_sends_temperature_zero() -> None:
    with FakeLLMServer(scripted("hi there")) as server:
        model = client(server)
        reply = model.complete(HELLO)
    assert reply.text == "hi there"
    assert reply.prompt_tokens == sum(count_message(m) for m in HELLO)
    assert reply.completion_tokens == count_text("hi there")
    body = server.requests[0].body
    assert body["temperature"] == 0.0 and body["model"] == "memory-1" and body["messages"] == HELLO
    assert model.usage.total.calls == 1 and model.usage.total.prompt_tokens == reply.prompt_tokens


@pytest.mark.parametrize("status", [429, 500, 503])
def test_transient_errors_are_retried(status: int) -> None:
    with FakeLLMServer(scripted(Reply(status=status), Reply(status=status), "recovered")) as server:
        model = client(server, max_retries=2)
        assert model.complete(HELLO).text == "recovered"
    assert len(server.requests) == 3
    assert model.usage.total.retries == 2 and model.usage.total.calls == 1


def test_persistent_500_gives_up_after_bounded_retries() -> None:
    with FakeLLMServer(lambda r: Reply(status=500)) as server:
        model = client(server, max_retries=2)
        with pytest.raises(ModelUnavailable, match="HTTP 500"):
            model.complete(HELLO)
    assert len(server.requests) == 3
    assert model.usage.total.failures == 1


def test_bad_request_is_not_retried() -> None:
    with FakeLLMServer(lambda r: Reply(status=400, body={"error": {"message": "bad field"}})) as server:
        model = client(server, max_retries=3)
        with pytest.raises(ModelRequestError, match="400"):
            model.complete(HELLO)
    assert len(server.requests) == 1


def test_slow_reply_times_out_and_retry_succeeds() -> None:
    with FakeLLMServer(scripted(Reply(text="late", delay=6.0), "fast")) as server:
        model = client(server, timeout=1.0, max_retries=1)  # a second of room: a loaded machine is slow
        start = time.monotonic()
        assert model.complete(HELLO).text == "fast"
        assert time.monotonic() - start < 5.0  # the late reply was not waited for


def test_slow_replies_raise_timeout() -> None:
    with FakeLLMServer(lambda r: Reply(text="late", delay=1.0)) as server:
        model = client(server, timeout=0.2, max_retries=0)
        with pytest.raises(ModelTimeout):
            model.complete(HELLO)


@pytest.mark.parametrize(
    "reply",
    [
        Reply(body=b"{not json", headers={"content-type": "application/json"}),
        Reply(body="<html>gateway</html>"),
        Reply(body={"object": "chat.completion", "choices": []}),
    ],
    ids=["broken-json", "html", "no-choices"],
)
def test_garbage_bodies_raise_response_errors(reply: Reply) -> None:
    with FakeLLMServer(lambda r: reply) as server:
        model = client(server, max_retries=1)
        with pytest.raises(ModelResponseError):
            model.complete(HELLO)
    assert len(server.requests) == 2  # garbage is retried once, then reported


def test_circuit_opens_and_spares_the_network() -> None:
    with FakeLLMServer(lambda r: Reply(status=500)) as server:
        model = client(server, max_retries=0, breaker_threshold=2, breaker_cooldown=60)
        for _ in range(2):
            with pytest.raises(ModelUnavailable):
                model.complete(HELLO)
        with pytest.raises(CircuitOpen):
            model.complete(HELLO)
    assert len(server.requests) == 2


def test_connection_refused_is_unavailable() -> None:
    with FakeLLMServer() as server:
        url = server.base_url
    model = build_model(ModelConfig(backend="openai", base_url=url, max_retries=0, timeout=2))
    with pytest.raises(ModelUnavailable):
        model.complete(HELLO)


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("none", None),
        ("json_object", {"type": "json_object"}),
        ("json_object_schema", {"type": "json_object", "schema": {"title": "t", "type": "object"}}),
        (
            "json_schema",
            {"type": "json_schema", "json_schema": {"name": "t", "schema": {"title": "t", "type": "object"}}},
        ),
    ],
)
def test_json_mode_is_sent_as_configured(kind: str, expected: object) -> None:
    with FakeLLMServer(scripted("{}")) as server:
        client(server, response_format=kind).complete(HELLO, json_schema={"title": "t", "type": "object"})
    assert server.requests[0].body.get("response_format") == expected


def test_server_streams_chat_completions() -> None:
    text = "a streamed reply that spans several chunks"
    with FakeLLMServer(scripted(text)) as server:
        sdk = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        stream = sdk.chat.completions.create(
            model="m", messages=HELLO, stream=True, stream_options={"include_usage": True}
        )
        chunks = list(stream)
    pieces = [c.choices[0].delta.content or "" for c in chunks if c.choices]
    assert "".join(pieces) == text and len(pieces) > 2
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == count_text(text)


def test_default_reply_answers_memory_prompts_as_json() -> None:
    prompt = "NEW STEP:\n[NEW N2]\naction: cat a/b.py\n\nCANDIDATES:\n[N1] status: unknown\nsummary: found a/b.py\n\n"
    prompt += 'INSTRUCTIONS:\nSelect at most 2 parents. Reply as JSON: {"parents": []}'
    with FakeLLMServer() as server:
        reply = client(server).complete([{"role": "user", "content": prompt}])
    assert json.loads(reply.text)["parents"][0]["id"] == "N1"


def test_anthropic_client_over_http(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CW_TEST_ANTHROPIC_KEY", "sk-ant-test-123")
    seen: list[Request] = []

    def reply(request: Request) -> str:
        seen.append(request)
        return '{"summary": "ok"}'

    with FakeLLMServer(reply) as server:
        model = build_model(
            ModelConfig(
                backend="anthropic",
                model="claude-x",
                base_url=server.url,
                api_key_env="CW_TEST_ANTHROPIC_KEY",
            )
        )
        out = model.complete(HELLO, json_schema={"title": "node_summary", "type": "object"})
    assert out.text == '{"summary": "ok"}' and out.prompt_tokens > 0
    assert seen[0].path.endswith("/v1/messages")
    sent = seen[0].headers.get("x-api-key") or seen[0].headers.get("authorization", "")
    assert sent.endswith("sk-ant-test-123")
    assert seen[0].body["system"].startswith("Be brief.") and "node_summary" in seen[0].body["system"]
    assert seen[0].body["messages"] == [{"role": "user", "content": "Say hi."}]


def test_anthropic_errors_are_translated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CW_TEST_ANTHROPIC_KEY", "k")
    with FakeLLMServer(lambda r: Reply(status=529)) as server:
        model = build_model(
            ModelConfig(
                backend="anthropic",
                base_url=server.url,
                api_key_env="CW_TEST_ANTHROPIC_KEY",
                max_retries=1,
                backoff=0,
            )
        )
        with pytest.raises(ModelUnavailable):
            model.complete(HELLO)
    assert len(server.requests) == 2
