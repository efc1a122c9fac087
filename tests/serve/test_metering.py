"""Measured cost per session and /metrics, against scripted upstreams on every wire, streamed or not."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
from click.testing import CliRunner
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from contextweaver.cli import main
from contextweaver.config import WeaverConfig
from contextweaver.prompt_cache import PRICES
from contextweaver.serve.ledger.cache_ledger import CacheLedger
from contextweaver.serve.ledger.metering import Metering
from contextweaver.serve.ledger.metrics import ProxyMetrics
from contextweaver.serve.upstream.usage import Answered
from contextweaver.store.sqlite import SQLiteStore
from contextweaver.testing.fake_server import FakeLLMServer, Reply, Request
from tests.serve import test_proxy_anthropic as claude
from tests.serve import test_proxy_responses as codex
from tests.serve.harness import running_proxy, task, tool_call_reply
from tests.serve.test_proxy_openai import agent_loop as chat_loop

TOKEN = "metering-proxy-token-0123456789"


def scripted(n: int) -> dict[str, int]:
    """The usage the upstream reports for its n-th answer on a wire (0-based)."""
    return {"input": 100 + n, "read": 1000 * n, "write": 400 if n == 0 else 30 + n, "output": 20 + n}


class Upstream:
    """Answers like each agent's API, with scripted usage (and one cache-miss reason per wire)."""

    def __init__(self) -> None:
        self.sent: dict[str, list[dict[str, int]]] = {"anthropic": [], "responses": [], "chat": []}

    def __call__(self, request: Request) -> Reply:
        path = request.path.split("?")[0]
        wire = (
            "anthropic"
            if path.endswith("/messages")
            else "responses"
            if path.endswith("/responses")
            else "chat"
        )
        if wire == "chat" and request.body.get("stream"):
            return Reply(text="streamed answer")  # the fake server reports this usage itself
        n = len(self.sent[wire])
        usage = scripted(n)
        self.sent[wire].append(usage)
        if wire == "anthropic":
            body = claude.claude_reply(request).body
            call = body["content"][1]  # numbered by answer, not by length: a cut history is shorter
            call["id"], call["input"]["command"] = (
                f"toolu_{n:03d}",
                call["input"]["command"].replace(".py", f"_{n}.py"),
            )
            body["usage"] = {"input_tokens": usage["input"], "cache_read_input_tokens": usage["read"],
                             "cache_creation_input_tokens": usage["write"], "output_tokens": usage["output"]}  # fmt: skip
            if len(self.sent[wire]) == 2:
                body["diagnostics"] = {"cache_miss_reason": {"type": "messages_changed"}}
        elif wire == "responses":
            body = codex.codex_reply(request).body
            body["usage"] = {"input_tokens": usage["input"] + usage["read"], "output_tokens": usage["output"],
                             "input_tokens_details": {"cached_tokens": usage["read"]}}  # fmt: skip
            usage["write"] = 0  # OpenAI bills no cache writes
        else:
            body = tool_call_reply(request).body
            body["usage"] = {"prompt_tokens": usage["input"] + usage["read"], "completion_tokens": usage["output"],
                             "prompt_tokens_details": {"cached_tokens": usage["read"]}}  # fmt: skip
            usage["write"] = 0
        return Reply(body=body)


def totals(usages: list[dict[str, int]]) -> dict[str, int]:
    return {
        "input_tokens": sum(u["input"] for u in usages),
        "cache_read_tokens": sum(u["read"] for u in usages),
        "cache_write_tokens": sum(u["write"] for u in usages),
        "output_tokens": sum(u["output"] for u in usages),
    }


def wait_for(check: Callable[[], Any], timeout: float = 20.0) -> Any:
    """The rows are written off the event loop once the answer has passed: poll until they are there."""
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
    return found


def answered(store: SQLiteStore, session: str | None = None) -> list[dict[str, Any]]:
    """The request rows whose answer is in (a row is written, status 0, before its request goes upstream)."""
    sessions = [session] if session is not None else list(store.request_totals())
    return [row for sid in sessions for row in store.requests(sid) if row["status"]]


def show(db: Path, session: str) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["sessions", "show", "--store", str(db), session, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)  # type: ignore[no-any-return]


def metrics(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = httpx.get(url.removesuffix("/v1") + "/metrics", headers={"x-contextweaver-token": TOKEN}).text
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}  # fmt: skip


@pytest.mark.slow
def test_billed_tokens_match_the_upstreams_usage_on_every_wire_and_metrics_agree(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    script = Upstream()
    config = WeaverConfig()  # lazy: the history passes through until the budget makes a cut
    with (
        FakeLLMServer(script) as upstream,
        running_proxy(SQLiteStore(db), upstream.base_url, config, budget=2500, auth_token=TOKEN) as (url, _),
    ):
        headers = {"x-contextweaver-token": TOKEN}
        claude_client = anthropic.Anthropic(base_url=url.removesuffix("/v1"), api_key="sk-ant-meter", max_retries=0,
                                            default_headers={**headers, "x-contextweaver-session": "claude-1"})  # fmt: skip
        claude.agent_loop(claude_client, claude.task("meter-a"), "meter-a", 3)
        streamed = anthropic.Anthropic(base_url=url.removesuffix("/v1"), api_key="sk-ant-meter", max_retries=0,
                                       default_headers={**headers, "x-contextweaver-session": "claude-2"})  # fmt: skip
        claude.agent_loop(streamed, claude.task("meter-b"), "meter-b", 8, stream=True)
        codex_client = openai.OpenAI(base_url=url, api_key="sk-codex", max_retries=0,
                                     default_headers={**headers, "x-contextweaver-session": "codex-1"})  # fmt: skip
        codex.agent_loop(codex_client, codex.task("meter-c"), "meter-c", 3, stream=True)
        chat = openai.OpenAI(base_url=url, api_key="sk-chat", max_retries=0,
                             default_headers={**headers, "x-contextweaver-session": "chat-1"})  # fmt: skip
        messages = task("meter-d")
        chat_loop(chat, messages, "meter-d", 3)
        with chat.chat.completions.create(model="fake", messages=messages, stream=True,  # type: ignore[arg-type]
                                          stream_options={"include_usage": True}) as events:  # fmt: skip
            assert "".join(c.choices[0].delta.content or "" for c in events if c.choices) == "streamed answer"
        store = SQLiteStore(db)
        wait_for(lambda: len(answered(store)) == 3 + 8 + 3 + 4)
        scraped = metrics(url)

    claude_usage, codex_usage = script.sent["anthropic"], script.sent["responses"]
    chat_usage = script.sent["chat"]
    final = upstream.requests[-1]
    assert final.body["stream"] is True
    sessions = {"claude-1": claude_usage[:3], "claude-2": claude_usage[3:], "codex-1": codex_usage}
    for session, usages in sessions.items():
        cost = show(db, session)["cost"]
        assert {k: cost[k] for k in totals(usages)} == totals(usages), session
        assert cost["usage_reported"] == cost["requests"] == len(usages)
        prices = PRICES["anthropic" if session.startswith("claude") else "openai"]
        t = totals(usages)
        billed = (
            t["input_tokens"] + prices.read * t["cache_read_tokens"] + prices.write * t["cache_write_tokens"]
        )
        assert abs(cost["billed"] - billed) < 0.11
    chat_cost = show(db, "chat-1")["cost"]
    streamed_usage = upstream._usage(final, "streamed answer")
    assert chat_cost["requests"] == chat_cost["usage_reported"] == 4
    assert chat_cost["input_tokens"] == totals(chat_usage)["input_tokens"] + streamed_usage["prompt_tokens"]
    assert (
        chat_cost["output_tokens"]
        == totals(chat_usage)["output_tokens"] + streamed_usage["completion_tokens"]
    )

    cut = show(db, "claude-2")["cost"]
    assert cut["cuts"] >= 1 and cut["sent_tokens"] < cut["full_tokens"]
    rows = SQLiteStore(db).requests("claude-2")
    assert abs(cut["passthrough"] - sum(r["billed"] * r["sim_full"] / r["sim_sent"] for r in rows)) < 0.11
    assert cut["saved"] == round(cut["passthrough"] - cut["billed"], 1)
    print("claude-2 cost:", cut)
    unwoven = show(db, "claude-1")["cost"]  # under the budget: passed through, nothing to save
    assert unwoven["cuts"] == 0 and unwoven["saved"] == 0
    assert unwoven["cache_misses"] == {"messages_changed": 1}  # the provider's reason, stored

    def metric(name: str, **labels: str) -> float:
        return scraped.get((name, tuple(sorted(labels.items()))), 0.0)

    every_claude = totals(claude_usage)
    assert metric("contextweaver_requests_total", wire="anthropic", status="200") == 11
    assert metric("contextweaver_requests_total", wire="responses", status="200") == 3
    assert metric("contextweaver_requests_total", wire="chat", status="200") == 4
    for kind, key in (("input", "input_tokens"), ("cache_read", "cache_read_tokens"),
                      ("cache_write", "cache_write_tokens"), ("output", "output_tokens")):  # fmt: skip
        assert metric("contextweaver_provider_tokens_total", wire="anthropic", kind=kind) == every_claude[key]
        assert (
            metric("contextweaver_provider_tokens_total", wire="responses", kind=kind)
            == totals(codex_usage)[key]
        )
    assert metric("contextweaver_usage_answers_total", wire="anthropic", usage="reported") == 11
    assert metric("contextweaver_cache_misses_total", wire="anthropic", reason="messages_changed") == 1
    store = SQLiteStore(db)
    rows = [row for session in ("claude-1", "claude-2") for row in store.requests(session)]
    assert metric("contextweaver_cuts_total", wire="anthropic") == sum(1 for r in rows if r["cut"]) >= 1
    assert metric("contextweaver_sent_tokens_total", wire="anthropic") == sum(r["sent_tokens"] for r in rows)
    assert metric("contextweaver_history_tokens_total", wire="anthropic") == sum(
        r["full_tokens"] for r in rows
    )
    assert metric("contextweaver_shed_tokens_total", wire="anthropic") == sum(
        r["full_tokens"] - r["sent_tokens"] for r in rows
    )
    assert metric("contextweaver_active_sessions") == 4
    assert metric("contextweaver_budget_refusals_total") == 0
    assert metric("contextweaver_store_failures_total", during="record") == 0


def test_a_malformed_usage_passes_unchanged_and_is_counted(tmp_path: Path) -> None:
    def reply(request: Request) -> Reply:
        body = claude.claude_reply(request).body
        body["usage"], body["id"] = {"input_tokens": -4, "output_tokens": "many"}, "msg_fixed"
        return Reply(body=json.dumps(body), headers={"content-type": "application/json"})

    db = tmp_path / "s.db"
    with (
        FakeLLMServer(reply) as upstream,
        running_proxy(SQLiteStore(db), upstream.base_url, WeaverConfig(), auth_token=TOKEN) as (url, _),
    ):
        client = claude.claude_client(url)
        raw = client.messages.with_raw_response.create(
            model="m", max_tokens=9, system=claude.SYSTEM, extra_headers={"x-contextweaver-token": TOKEN},
            messages=[*claude.task("bad-usage"), {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
                      {"role": "user", "content": [{"type": "text", "text": "go on"}]}],
        )  # fmt: skip
        assert raw.http_response.content == reply(upstream.requests[-1]).body.encode()  # type: ignore[union-attr]
        store = SQLiteStore(db)
        rows = wait_for(lambda: answered(store))
        scraped = metrics(url)
    assert [(r["usage"], r["billed"], r["input_tokens"]) for r in rows] == [("malformed", None, None)]
    assert (
        scraped[("contextweaver_usage_answers_total", (("usage", "malformed"), ("wire", "anthropic")))] == 1
    )


@pytest.mark.slow
def test_with_weaving_processes_the_http_process_meters_every_answer(tmp_path: Path) -> None:
    from tests.serve.processes import serve_process, upstream_process

    with (
        upstream_process(tmp_path) as (port, _),
        serve_process(
            tmp_path, f"http://127.0.0.1:{port}/v1", "--weaving-processes", "2", token=TOKEN
        ) as proxy,
    ):
        client = openai.OpenAI(base_url=proxy.url + "/v1", api_key="sk-workers", max_retries=0,
                               default_headers={"x-contextweaver-token": TOKEN, "x-contextweaver-session": "w-1"})  # fmt: skip
        chat_loop(client, task("workers"), "workers", 4)
        store = SQLiteStore(proxy.store)
        wait_for(lambda: len(answered(store, "w-1")) == 4)
        scraped = metrics(proxy.url + "/v1")
    cost = show(proxy.store, "w-1")["cost"]  # tool_call_reply reports 10 prompt and 5 completion tokens
    assert (cost["input_tokens"], cost["output_tokens"], cost["usage_reported"]) == (40, 20, 4)
    assert scraped[("contextweaver_provider_tokens_total", (("kind", "input"), ("wire", "chat")))] == 40
    assert scraped[("contextweaver_requests_total", (("status", "200"), ("wire", "chat")))] == 4


def test_answers_outside_any_session_are_counted_not_stored(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with (
        FakeLLMServer(tool_call_reply) as upstream,
        running_proxy(SQLiteStore(db), upstream.base_url, auth_token=TOKEN) as (url, _),
    ):
        client = openai.OpenAI(base_url=url, api_key="sk-first", max_retries=0,
                               default_headers={"x-contextweaver-token": TOKEN})  # fmt: skip
        chat_loop(client, task("unnamed"), "unnamed", 2)  # the first request has no step: no session yet
        store = SQLiteStore(db)
        wait_for(lambda: len(answered(store)) == 1)
        scraped = metrics(url)
    assert scraped[("contextweaver_usage_answers_total", (("usage", "reported"), ("wire", "chat")))] == 2
    assert scraped[("contextweaver_provider_tokens_total", (("kind", "input"), ("wire", "chat")))] == 20


def test_cache_miss_reasons_from_the_upstream_are_a_bounded_label_set(tmp_path: Path) -> None:
    """3,000 distinct reasons made 3,000 label values (931 KB of /metrics, issue 53): the known reasons and
    the first few others keep their own label, the rest count as `other`; every miss is still counted."""
    metrics_ = ProxyMetrics()
    metering = Metering(SQLiteStore(tmp_path / "s.db"), CacheLedger(), metrics_)
    rows = []
    for n in range(3000):
        reason = "messages_changed" if n % 2 else f"reason_{n}_{'x' * 60}"
        body = {"usage": {"input_tokens": 1, "output_tokens": 1},
                "diagnostics": {"cache_miss_reason": {"type": reason}}}  # fmt: skip
        rows.append(row := {"usage_note": None})
        metering.usage("anthropic", Answered(200, json.dumps(body).encode(), False), row)
    assert rows[0]["miss_reason"] == f"reason_0_{'x' * 60}"  # the row keeps the reason itself
    text = generate_latest(metrics_.registry).decode()
    misses = {s.labels["reason"]: s.value for f in text_string_to_metric_families(text)
              for s in f.samples if s.name == "contextweaver_cache_misses_total"}  # fmt: skip
    assert misses["messages_changed"] == 1500 and sum(misses.values()) == 3000
    assert misses["other"] > 1400 and len(misses) <= 64, len(misses)
    assert len(text) < 50_000, len(text)
