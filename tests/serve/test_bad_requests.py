"""Bad requests get clear 4xx answers in OpenAI's error shape and never disturb other sessions."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from contextweaver.serve import read_conversation
from contextweaver.store.sqlite import SQLiteStore
from contextweaver.testing.fake_server import FakeLLMServer
from tests.serve.harness import running_proxy, task, tool_call_reply
from tests.serve.test_proxy_openai import agent_loop

BAD = [
    (b'{"model": "m", "messages": [', 400, "not valid JSON"),
    (b"\xff\xfe\x00garbage", 400, "not"),
    (b'["a", "list"]', 400, "JSON object"),
    (b'{"model": "m"}', 400, "missing required field 'messages'"),
    (b'{"model": "m", "messages": "hello"}', 400, "non-empty list"),
    (b'{"model": "m", "messages": []}', 400, "non-empty list"),
    (b'{"model": "m", "messages": [{"content": "no role"}]}', 400, "messages[0] has no 'role'"),
    (b'{"model": "m", "messages": [{"role": "user", "content": 5}]}', 400, "messages[0].content"),
    (
        b'{"model": "m", "messages": [{"role": "assistant", "content": "hi"}]}',
        400,
        "starts with an assistant",
    ),
]


@pytest.fixture
def proxy(tmp_path: Path) -> Any:
    with (
        FakeLLMServer(tool_call_reply) as upstream,
        running_proxy(SQLiteStore(tmp_path / "s.db"), upstream.base_url, max_body_bytes=8 * 1024 * 1024) as (
            url,
            manager,
        ),
    ):
        yield url, manager, upstream


@pytest.mark.slow
def test_each_bad_request_gets_a_clear_4xx(proxy: Any) -> None:
    url, manager, upstream = proxy
    good = task("good-1")
    agent_loop(openai.OpenAI(base_url=url, api_key="k", max_retries=0, default_headers={"x-contextweaver-session": "good"}), good, "good-1", 3)  # fmt: skip
    seen = len(upstream.requests)
    for body, status, words in BAD:
        answer = httpx.post(
            f"{url}/chat/completions", content=body, headers={"content-type": "application/json"}
        )
        assert answer.status_code == status, body
        assert words in answer.json()["error"]["message"], answer.json()
    bad_id = httpx.post(f"{url}/chat/completions", json={"model": "m", "messages": task("x")},
                        headers={"x-contextweaver-session": "no spaces allowed"})  # fmt: skip
    assert bad_id.status_code == 400 and bad_id.json()["error"]["param"] == "x-contextweaver-session"
    tokenless = httpx.get(f"{url.removesuffix('/v1')}/contextweaver/sessions/good")
    assert tokenless.status_code == 403 and "needs a proxy token" in tokenless.json()["error"]["message"]
    assert len(upstream.requests) == seen, "no bad request reaches the upstream"
    with pytest.raises(openai.BadRequestError, match="must be a non-empty list"):
        openai.OpenAI(base_url=url, api_key="k", max_retries=0).chat.completions.create(
            model="m", messages=None
        )  # type: ignore[arg-type]
    agent_loop(openai.OpenAI(base_url=url, api_key="k", max_retries=0, default_headers={"x-contextweaver-session": "good"}), good, "good-1", 2)  # fmt: skip
    assert [s.step for s in manager.store.steps("good")] == read_conversation(good[:-2]).steps
    assert [s.id for s in manager.store.sessions()] == ["good"]


@pytest.mark.slow
def test_a_50_mb_body_is_refused_while_other_sessions_go_on(proxy: Any) -> None:
    url, manager, _ = proxy
    huge = b'{"model": "m", "messages": [{"role": "user", "content": "' + b"x" * (50 * 1024 * 1024) + b'"}]}'
    results: dict[str, Any] = {}

    def send_huge() -> None:
        results["huge"] = httpx.post(f"{url}/chat/completions", content=huge, timeout=60,
                                     headers={"content-type": "application/json"})  # fmt: skip

    def send_chunked() -> None:  # no content-length: the limit is enforced while reading
        chunks = (huge[i : i + 1 << 20] for i in range(0, len(huge), 1 << 20))
        results["chunked"] = httpx.post(f"{url}/chat/completions", content=chunks, timeout=60,
                                        headers={"content-type": "application/json"})  # fmt: skip

    threads = [threading.Thread(target=send_huge), threading.Thread(target=send_chunked)]
    for thread in threads:
        thread.start()
    messages = task("steady")
    client = openai.OpenAI(base_url=url, api_key="k", max_retries=0, default_headers={"x-contextweaver-session": "steady"})  # fmt: skip
    agent_loop(client, messages, "steady", 4)
    for thread in threads:
        thread.join(60)
    for name in ("huge", "chunked"):
        assert results[name].status_code == 413, name
        assert "too large" in results[name].json()["error"]["message"]
    assert manager.store.step_count("steady") == 3
