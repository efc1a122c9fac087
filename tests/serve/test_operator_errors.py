"""What an operator and a client see when a request fails: one log line each, in the client's own shape.

Every 4xx/5xx is one WARNING line with the session and the reason (the guard's 401/403/415, a 404 from a
wrong base URL, the proxy's 502 with its session); a 404 names the likely fix; /health answers beside
/contextweaver/health and says "degraded" while the upstream cannot be reached, checked once per TTL.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from contextweaver.serve.upstream.health import UpstreamProbe
from contextweaver.store.sqlite import SQLiteStore
from contextweaver.testing.fake_server import FakeLLMServer
from tests.serve.harness import running_proxy, task, tool_call_reply
from tests.serve.processes import free_port

TOKEN = "proxy-token-0123456789abcdef"
ANTHROPIC = {"anthropic-version": "2023-06-01", "x-api-key": "sk-ant-x", "content-type": "application/json"}
MESSAGE = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}


def shape(answer: httpx.Response) -> str:
    """Which client shape an error body has: Anthropic's or OpenAI's (and nothing else)."""
    body = answer.json()
    if body.get("type") == "error" and set(body["error"]) == {"type", "message"}:
        return "anthropic"
    assert {"message", "type", "code"} <= set(body["error"]), body
    return "openai"


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno >= logging.WARNING and r.name.startswith("contextweaver")
    ]


@pytest.fixture
def proxy(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> Iterator[str]:
    caplog.set_level(logging.INFO, logger="contextweaver")
    with FakeLLMServer(tool_call_reply) as upstream, running_proxy(SQLiteStore(tmp_path / "s.db"), upstream.base_url) as (url, _):  # fmt: skip
        yield url.removesuffix("/v1")


def test_a_doubled_v1_is_a_404_in_anthropics_shape_that_names_the_fix(proxy: str, caplog: Any) -> None:
    answer = httpx.post(f"{proxy}/v1/v1/messages?beta=true", json=MESSAGE, headers=ANTHROPIC)
    assert answer.status_code == 404 and shape(answer) == "anthropic"
    assert f"ANTHROPIC_BASE_URL={proxy} (no /v1)" in answer.json()["error"]["message"]
    (line,) = warnings(caplog)
    assert "POST /v1/v1/messages: 404 for session -: proxy not_found" in line and "no /v1" in line


def test_a_missing_v1_and_a_health_guess_are_404s_that_name_the_fix(proxy: str, caplog: Any) -> None:
    missing = httpx.post(f"{proxy}/responses", json={"model": "m", "input": "hi"})
    assert missing.status_code == 404 and shape(missing) == "openai"
    assert f"needs /v1 ({proxy}/v1)" in missing.json()["error"]["message"]
    guessed = httpx.get(f"{proxy}/v1/health")
    assert guessed.status_code == 404 and "/contextweaver/health" in guessed.json()["error"]["message"]
    assert len(warnings(caplog)) == 2
    assert httpx.get(f"{proxy}/health").json()["status"] == "ok"  # the alias answers


def test_an_unknown_path_is_a_404_that_lists_every_route_served(proxy: str) -> None:
    """The list left out /metrics, the dashboard and the sessions API (issue 53)."""
    answer = httpx.get(f"{proxy}/nowhere")
    assert answer.status_code == 404
    message = answer.json()["error"]["message"]
    for route in ("/v1/messages", "/v1/responses", "/v1/chat/completions", "/v1/models", "/contextweaver/health",
                  "/metrics", "/contextweaver/sessions", "/contextweaver/dashboard"):  # fmt: skip
        assert route in message, (route, message)


def test_every_guard_refusal_is_logged_with_its_reason_in_the_wires_shape(
    tmp_path: Path, caplog: Any
) -> None:
    caplog.set_level(logging.INFO, logger="contextweaver")
    with FakeLLMServer(tool_call_reply) as upstream, running_proxy(SQLiteStore(tmp_path / "s.db"), upstream.base_url, auth_token=TOKEN) as (url, _):  # fmt: skip
        base = url.removesuffix("/v1")
        unauthenticated = httpx.post(f"{base}/v1/messages", json=MESSAGE, headers=ANTHROPIC)
        foreign = httpx.post(f"{base}/v1/responses", json={"model": "m", "input": "hi"},
                             headers={"authorization": f"Bearer {TOKEN}", "host": "evil.example"})  # fmt: skip
        plain = httpx.post(f"{base}/v1/messages", content=b"{}",
                           headers={**ANTHROPIC, "x-contextweaver-token": TOKEN, "content-type": "text/plain"})  # fmt: skip
    assert [a.status_code for a in (unauthenticated, foreign, plain)] == [401, 403, 415]
    assert [shape(a) for a in (unauthenticated, foreign, plain)] == ["anthropic", "openai", "anthropic"]
    lines = warnings(caplog)
    assert len(lines) == 3, lines
    assert "401 for session -: proxy invalid_token: missing or wrong proxy token" in lines[0]
    assert "403 for session -: proxy host_not_allowed: host 'evil.example'" in lines[1]
    assert "415 for session -: proxy unsupported_media_type: content type 'text/plain'" in lines[2]


def test_a_502_names_its_session_in_the_answer_and_the_log(tmp_path: Path, caplog: Any) -> None:
    caplog.set_level(logging.INFO, logger="contextweaver")
    closed = f"http://127.0.0.1:{free_port()}/v1"
    with running_proxy(SQLiteStore(tmp_path / "s.db"), closed) as (url, _):
        headers = {**ANTHROPIC, "x-contextweaver-session": "s-502"}
        answer = httpx.post(f"{url}/messages", json=MESSAGE, headers=headers)
        health = httpx.get(url.removesuffix("/v1") + "/contextweaver/health").json()
    assert answer.status_code == 502 and shape(answer) == "anthropic"
    assert answer.headers["x-contextweaver-session"] == "s-502"
    (line,) = warnings(caplog)
    assert "502 for session s-502: proxy upstream_unreachable: cannot reach the upstream" in line
    assert health["status"] == "degraded" and "cannot reach the upstream" in health["upstream_error"]


def test_an_upstream_error_is_logged_as_the_upstreams(proxy: str, caplog: Any) -> None:
    answer = httpx.post(f"{proxy}/v1/chat/completions", json={"model": "m", "messages": task("ok")})
    assert answer.status_code == 200 and not warnings(caplog)


@contextmanager
def counting_server() -> Iterator[tuple[int, list[int]]]:
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[int] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            accepted.append(1)
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield server.getsockname()[1], accepted
    finally:
        server.close()


def test_the_upstream_probe_connects_once_per_ttl_and_says_why_it_failed() -> None:
    async def asked(probe: UpstreamProbe, times: int) -> list[str | None]:
        return [await probe.problem() for _ in range(times)]

    with counting_server() as (port, accepted):
        probe = UpstreamProbe(f"http://127.0.0.1:{port}/v1", "the upstream", ttl=60)
        assert anyio.run(asked, probe, 20) == [None] * 20
        deadline = time.monotonic() + 10
        while not accepted and time.monotonic() < deadline:  # the accepting thread runs on its own time
            time.sleep(0.01)
        assert len(accepted) == 1
    closed = UpstreamProbe(f"http://127.0.0.1:{free_port()}/v1", "http://127.0.0.1/v1", ttl=0)
    (problem,) = anyio.run(asked, closed, 1)
    assert problem is not None and problem.startswith(
        "cannot reach the upstream http://127.0.0.1/v1: ConnectionRefusedError"
    )
