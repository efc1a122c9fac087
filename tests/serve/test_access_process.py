"""Who may use a `contextweaver serve` process: token, Host, content type, session owners (real processes)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.serve.harness import task
from tests.serve.processes import CLI, Proxy, serve_process, start_serve, upstream_process

TOKEN = "proxy-token-0123456789abcdef"
OPERATOR_KEY = "sk-operator-key-7d1e"
pytestmark = pytest.mark.skipif(not CLI.exists(), reason="the contextweaver script is not installed")


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Proxy, Path]]:
    tmp = tmp_path_factory.mktemp("access")
    with (
        upstream_process(tmp) as (port, log),
        serve_process(tmp, f"http://127.0.0.1:{port}/v1", "--api-key-env", "CW_OPERATOR_KEY", "--weaving-processes", "1",
                      env={"CW_OPERATOR_KEY": OPERATOR_KEY}, token=TOKEN) as proxy,
    ):  # fmt: skip
        yield proxy, log


def as_caller(key: str) -> dict[str, str]:
    """A caller with its own upstream key, holding the proxy token beside it."""
    return {"authorization": f"Bearer {key}", "x-contextweaver-token": TOKEN}


def chat(proxy: Proxy, messages: list[dict[str, Any]], headers: dict[str, str]) -> httpx.Response:
    body = json.dumps({"model": "m", "messages": messages})  # ASCII escapes: lone surrogates survive
    return httpx.post(f"{proxy.url}/v1/chat/completions", content=body, timeout=30,
                      headers={"content-type": "application/json", **headers})  # fmt: skip


def step(messages: list[dict[str, Any]], answer: httpx.Response, output: str) -> list[dict[str, Any]]:
    message = answer.json()["choices"][0]["message"]
    results = [{"role": "tool", "tool_call_id": c["id"], "content": output} for c in message["tool_calls"]]
    return [*messages, message, *results]


def run(proxy: Proxy, headers: dict[str, str], marker: str, steps: int) -> list[dict[str, Any]]:
    messages = task(marker)
    for n in range(steps):
        answer = chat(proxy, messages, headers)
        assert answer.status_code == 200, answer.text
        messages = step(messages, answer, f"output {n} of {marker}")
    return messages


def test_a_non_loopback_bind_without_a_token_refuses_to_start(tmp_path: Path) -> None:
    process, *_, stderr, _ = start_serve(tmp_path, "http://127.0.0.1:9/v1", "--host", "0.0.0.0")
    try:
        assert process.wait(60) != 0
    finally:
        process.kill()
    assert "--auth-token-env" in stderr.read_text()


def test_the_operator_key_without_a_token_refuses_to_start(tmp_path: Path) -> None:
    process, *_, stderr, _ = start_serve(tmp_path, "http://127.0.0.1:9/v1", "--api-key-env", "CW_X",
                                         env={"CW_X": OPERATOR_KEY})  # fmt: skip
    try:
        assert process.wait(60) != 0
    finally:
        process.kill()
    assert "--auth-token-env" in stderr.read_text()


@pytest.mark.slow
def test_every_route_needs_the_token(proxy: tuple[Proxy, Path]) -> None:
    server, log = proxy
    before = len(log.read_text().splitlines())
    for method, path in [("POST", "/v1/chat/completions"), ("GET", "/v1/models"), ("GET", "/contextweaver/sessions"),
                         ("GET", "/contextweaver/health")]:  # fmt: skip
        for headers in (
            {},
            {"authorization": "Bearer wrong-token-0123456789"},
            {"x-contextweaver-token": "no"},
        ):
            answer = httpx.request(method, server.url + path, headers={**headers, "content-type": "application/json"},
                                   content=json.dumps({"model": "m", "messages": task("x")}))  # fmt: skip
            assert answer.status_code == 401, (path, headers)
            assert answer.json()["error"]["code"] == "invalid_token"
    assert len(log.read_text().splitlines()) == before, "nothing unauthenticated reaches the upstream"


def test_dns_rebinding_and_cross_site_posts_are_refused(proxy: tuple[Proxy, Path]) -> None:
    server, _ = proxy
    headers = {**server.auth, "host": "attacker.example:8400"}
    assert chat(server, task("x"), headers).status_code == 403
    assert chat(server, task("x"), {**server.auth, "origin": "https://attacker.example"}).status_code == 403
    plain = httpx.post(f"{server.url}/v1/chat/completions", headers={**server.auth, "content-type": "text/plain"},
                       content=json.dumps({"model": "m", "messages": task("x")}))  # fmt: skip
    assert plain.status_code == 415 and plain.json()["error"]["code"] == "unsupported_media_type"


def test_another_caller_can_neither_read_nor_append_to_a_session(proxy: tuple[Proxy, Path]) -> None:
    server, _ = proxy
    alice, mallory = as_caller("sk-alice"), as_caller("sk-mallory")
    named = {**alice, "x-contextweaver-session": "alice-run"}
    messages = run(server, named, "alice-run", 3)
    for path in ("/contextweaver/sessions/alice-run", "/contextweaver/sessions/alice-run?offset=1"):
        assert httpx.get(server.url + path, headers=mallory).status_code == 404
    assert "alice-run" not in [s["id"] for s in httpx.get(server.url + "/contextweaver/sessions", headers=mallory).json()["sessions"]]  # fmt: skip
    squat = chat(server, messages, {**mallory, "x-contextweaver-session": "alice-run"})
    assert squat.status_code == 409 and squat.json()["error"]["code"] == "session_taken"
    assert chat(server, messages, named).status_code == 200, "the owner is never locked out"
    page = httpx.get(server.url + "/contextweaver/sessions/alice-run?limit=2", headers=alice).json()
    assert [n["index"] for n in page["nodes"]] == [1, 2] and page["next_offset"] == 2
    rest = httpx.get(server.url + "/contextweaver/sessions/alice-run?offset=2&limit=2", headers=alice).json()
    assert [n["index"] for n in rest["nodes"]] == [3] and rest["next_offset"] is None


def test_derived_sessions_of_two_callers_never_merge(proxy: tuple[Proxy, Path]) -> None:
    server, _ = proxy
    first = run(server, as_caller("sk-one"), "same-task", 2)
    second = chat(server, first, as_caller("sk-two"))
    again = chat(server, first, as_caller("sk-one"))
    assert second.headers["x-contextweaver-session"] != again.headers["x-contextweaver-session"]


def test_the_operator_key_goes_only_to_token_holders(proxy: tuple[Proxy, Path]) -> None:
    server, log = proxy
    answer = chat(server, task("operator"), server.auth)  # the token as Authorization, no own key
    assert answer.status_code == 200
    assert answer.headers.get_list("date") == [answer.headers["date"]], "one date header"
    assert len(answer.headers.get_list("server")) <= 1
    received = json.loads(log.read_text().splitlines()[-1])
    assert received["_authorization"] == f"Bearer {OPERATOR_KEY}", "the token itself never goes upstream"
    own = chat(server, task("own-key"), as_caller("sk-own"))
    assert (
        own.status_code == 200
        and json.loads(log.read_text().splitlines()[-1])["_authorization"] == "Bearer sk-own"
    )


def test_an_agent_that_trims_its_history_keeps_its_named_session(proxy: tuple[Proxy, Path]) -> None:
    server, _ = proxy
    headers = {**as_caller("sk-trim"), "x-contextweaver-session": "trimmed"}
    messages, ids = task("trimmed"), set()
    for n in range(6):
        answer = chat(server, messages, headers)
        assert answer.status_code == 200, answer.text
        ids.add(answer.headers["x-contextweaver-session"])
        messages = step(messages, answer, f"output {n}")
        messages = [*messages[:2], *messages[2:][-4:]]  # the agent keeps its last two turns only
    page = httpx.get(server.url + "/contextweaver/sessions/trimmed", headers=as_caller("sk-trim")).json()
    assert ids == {"trimmed"} and page["steps"] == 5  # the 6th answer is not sent back yet
