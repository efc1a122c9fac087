"""The proxy's per-session prompt-cache record: the simulated cached prefix and the provider's own count."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import httpx
import openai
import pytest

from contextweaver.config import WeaverConfig
from contextweaver.serve.ledger.cache_ledger import CacheLedger
from contextweaver.serve.wires import wire
from contextweaver.store.sqlite import SQLiteStore
from contextweaver.testing.fake_server import FakeLLMServer, Reply, Request
from tests.serve.harness import running_proxy, task, tool_call_reply
from tests.serve.processes import serve_process, upstream_process
from tests.serve.test_proxy_openai import agent_loop
from tests.serve.test_session_cache_bytes import KB, with_root


def test_the_ledger_forgets_the_least_recent_session_first() -> None:
    ledger = CacheLedger(max_sessions=2)
    for name in ("a", "b", "c"):
        messages = [{"role": "user", "content": name}]
        ledger.record(name, ledger.simulate(name, messages, messages).sent)
    assert ledger.summary("a") is None and ledger.summary("c") is not None


def test_a_thread_mode_proxy_simulates_only_the_sessions_its_session_cache_holds(tmp_path: Path) -> None:
    """A simulation keeps its session's last history: 256 of them (the old count bound) with 300 KB roots
    held 75 MB of text or more beside a 2 MB session cache. They now follow the cache, which counts them in its bytes."""
    with (
        FakeLLMServer(tool_call_reply) as upstream,
        running_proxy(
            SQLiteStore(tmp_path / "s.db"), upstream.base_url, WeaverConfig(), cache_bytes=2_000 * KB
        ) as (url, manager),
    ):
        for n in range(10):
            answer = httpx.post(url + "/chat/completions", json={"model": "m", "messages": with_root(f"r{n}", 300 * KB)},
                                headers={"x-contextweaver-session": f"r{n}"}, timeout=60)  # fmt: skip
            assert answer.status_code == 200 and "x-contextweaver-cached-prefix" in answer.headers
        ledger = getattr(manager.on_evict, "__self__", None)
        assert isinstance(ledger, CacheLedger), "the proxy's ledger forgets what the session cache drops"
        simulated = [sid for sid, entry in ledger._sessions.items() if entry.simulation is not None]
        assert simulated == list(manager._cache) and 0 < len(simulated) < 10
        assert ledger.summary("r0") == {**ledger.summary("r0"), "requests": 1}  # the counts stay


def cached_reply(request: Request) -> Reply:
    reply = tool_call_reply(request)
    body = dict(reply.body)  # type: ignore[arg-type]
    body["usage"] = {
        "prompt_tokens": 2000,
        "completion_tokens": 5,
        "prompt_tokens_details": {"cached_tokens": 1536},
    }
    return Reply(body=body)


def test_the_proxy_reports_the_cached_share_per_session(tmp_path: Path) -> None:
    messages = task("cache-run")
    messages[0]["content"] += " Keep going." * 600  # a root long enough to be cached
    store = SQLiteStore(tmp_path / "s.db")
    # the default lazy mode: the unbudgeted history passes through, so every prefix repeats
    token = "proxy-token-0123456789abcdef"
    with (
        FakeLLMServer(cached_reply) as upstream,
        running_proxy(store, upstream.base_url, WeaverConfig(), auth_token=token) as (url, _),
    ):
        agent = openai.OpenAI(base_url=url, api_key="k", max_retries=0,
                              default_headers={"x-contextweaver-session": "cache-run", "x-contextweaver-token": token})  # fmt: skip
        agent_loop(agent, messages, "cache-run", 6)
        detail = httpx.get(url.removesuffix("/v1") + "/contextweaver/sessions/cache-run",
                           headers={"authorization": "Bearer k", "x-contextweaver-token": token}).json()  # fmt: skip
        raw = agent.chat.completions.with_raw_response.create(model="m", messages=messages)  # type: ignore[arg-type]
    record = detail["prompt_cache"]
    assert record["requests"] == 6 and record["provider_reports"] == 6
    assert record["provider_cached_tokens"] == 6 * 1536
    assert 0.5 < record["cached_prefix_share"] <= 1.0
    assert 0.5 < float(raw.headers["x-contextweaver-cached-prefix"]) <= 1.0


def shares(url: str, messages: list, turns: int, tools: list | None = None) -> list[str | None]:
    """The cached-prefix header of each request of an agent loop with no session header."""
    found = []
    for _ in range(turns):
        body = {"model": "m", "messages": messages, **({"tools": tools} if tools else {})}
        answer = httpx.post(f"{url}/chat/completions", json=body, timeout=60)
        assert answer.status_code == 200, answer.text
        found.append(answer.headers.get("x-contextweaver-cached-prefix"))
        reply = answer.json()["choices"][0]["message"]
        call = reply["tool_calls"][0]
        messages += [reply, {"role": "tool", "tool_call_id": call["id"], "content": f"{call['id']} output"}]
    return found


def test_an_unnamed_sessions_second_request_counts_the_root_its_first_call_sent(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The first call (the root alone) has no session yet; the provider still cached that root."""
    caplog.set_level(logging.INFO, logger="contextweaver")
    messages = task("second")
    messages[0]["content"] += " Keep going." * 600
    tools = [{"type": "function", "function": {"name": "bash", "description": "run a command " * 40,
                                               "parameters": {"type": "object"}}}]  # fmt: skip
    with FakeLLMServer(tool_call_reply) as upstream, running_proxy(SQLiteStore(tmp_path / "s.db"), upstream.base_url, WeaverConfig()) as (url, _):  # fmt: skip
        found = shares(url, messages, 3, tools)
    assert found[0] is None  # no session yet: nothing stored, nothing recorded
    assert float(found[1]) > 0.9 and float(found[2]) > 0.9, found
    tool_tokens = next(int(m.group(1)) for r in caplog.records
                       if (m := re.search(r"tokens, (\d+) of them tool definitions", r.getMessage())))  # fmt: skip
    assert tool_tokens == wire.tool_tokens({"tools": tools}) > 0


def test_the_same_holds_with_weaving_processes(tmp_path: Path) -> None:
    messages = task("second-process")
    messages[0]["content"] += " Keep going." * 600
    with (
        upstream_process(tmp_path) as (port, _),
        serve_process(tmp_path, f"http://127.0.0.1:{port}/v1") as proxy,
    ):
        found = shares(proxy.url + "/v1", messages, 3)
    assert found[0] is None and float(found[1]) > 0.9 and float(found[2]) > 0.9, found
