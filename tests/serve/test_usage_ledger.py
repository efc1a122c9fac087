"""Every answer the upstream gave is one row of the usage ledger, and /metrics equals the rows (issue 53).

A scripted session on each wire: a plain stream, a stream the upstream breaks off after its first event,
usage of 2^63 and 2^62 tokens, usage that is not a count, and a caller hanging up right after the usage
event while the upstream's stream stays open. Each answer is a row, with the usage it reported (clamped
to a sane bound, the raw value noted) or marked missing or malformed with the reason.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from contextweaver.cli import main
from contextweaver.serve.ledger.metering import NO_ANSWER
from contextweaver.serve.upstream.usage import MAX_TOKENS
from contextweaver.store.sqlite import SQLiteStore
from contextweaver.testing import fake_wire
from contextweaver.testing.fake_server import FakeLLMServer, Reply, Request
from tests.serve.harness import running_proxy, task
from tests.serve.processes import start_serve
from tests.serve.test_metering import TOKEN, answered, metrics, wait_for

HUGE, BIG = 2**63, 2**62
SCENARIOS: list[tuple[str, bool, Any]] = [
    # name, streamed, input tokens reported
    ("plain", True, 100),
    ("cut", True, 100),
    ("huge", False, HUGE),
    ("big-streamed", True, BIG),
    ("big", False, BIG),
    ("garbage", False, "lots"),
    ("hang-up", True, 100),
]
PATHS = {"chat": "/v1/chat/completions", "anthropic": "/v1/messages", "responses": "/v1/responses"}
LAST_USAGE = {"chat": b'"usage"', "anthropic": b"message_delta", "responses": b"response.completed"}
"""The event after which the caller of the hang-up scenario closes its connection."""


def usage_of(wire: str, tokens: Any) -> dict[str, Any]:
    if wire == "anthropic":
        return {"input_tokens": tokens, "output_tokens": 10}
    if wire == "responses":
        return {"input_tokens": tokens, "output_tokens": 10, "input_tokens_details": {"cached_tokens": 0}}
    return {"prompt_tokens": tokens, "completion_tokens": 10, "total_tokens": 10}


def scripted(request: Request) -> Reply:
    name = request.headers["x-scenario"]
    _, streamed, tokens = next(s for s in SCENARIOS if s[0] == name)
    wire = next(w for w, path in PATHS.items() if request.path.startswith(path))
    usage = usage_of(wire, tokens)
    shape = {"cut_after": 1 if name == "cut" else None, "hold": 2.0 if name == "hang-up" else 0.0}
    model = str(request.body.get("model"))
    if wire == "anthropic":
        body = fake_wire.anthropic_message(model, [{"type": "text", "text": "done"}])
        return Reply(body={**body, "usage": usage}, **shape)  # type: ignore[arg-type]
    if wire == "responses":
        item = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}
        return Reply(body={**fake_wire.responses_object(model, [item]), "usage": usage}, **shape)  # type: ignore[arg-type]
    if streamed:
        return Reply(text="done", usage=usage, **shape)  # type: ignore[arg-type]
    body = {"id": "c", "object": "chat.completion", "model": model, "usage": usage,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "done"}, "finish_reason": "stop"}]}  # fmt: skip
    return Reply(body=body)


def first_messages(wire: str) -> list[dict[str, Any]]:
    if wire == "anthropic":
        return [{"role": "user", "content": [{"type": "text", "text": "Fix the failing test. ledger"}]}]
    if wire == "responses":
        return [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix it. ledger"}]}
        ]
    return task("ledger")


def step(wire: str, n: int, command: str = "", output: str = "") -> list[dict[str, Any]]:
    """One more call and its output, in the wire's shape (the agent's history grows by a step a request);
    by default a new file read each time."""
    command, output = command or f"cat file_{n}.py", output or f"line {n}\n" * 20
    if wire == "anthropic":
        return [{"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{n}", "name": "bash",
                                                   "input": {"command": command}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": output}]}]  # fmt: skip
    if wire == "responses":
        return [{"type": "function_call", "call_id": f"call_{n}", "name": "bash",
                 "arguments": json.dumps({"command": command})},
                {"type": "function_call_output", "call_id": f"call_{n}", "output": output}]  # fmt: skip
    return [{"role": "assistant", "content": None, "tool_calls": [{"id": f"call_{n}", "type": "function",
             "function": {"name": "bash", "arguments": json.dumps({"command": command})}}]},
            {"role": "tool", "tool_call_id": f"call_{n}", "content": output}]  # fmt: skip


def body_of(wire: str, messages: list[dict[str, Any]], streamed: bool) -> dict[str, Any]:
    field = "input" if wire == "responses" else "messages"
    body: dict[str, Any] = {"model": "m", field: messages, "stream": streamed}
    if wire == "anthropic":
        body["max_tokens"] = 100
    if wire == "chat" and streamed:
        body["stream_options"] = {"include_usage": True}
    return body


def run_session(base: str, wire: str) -> None:
    """The scenarios in order, one request each, the history growing by a step a request."""
    messages = first_messages(wire) + step(wire, 0)
    for n, (name, streamed, _) in enumerate(SCENARIOS):
        headers = {"x-contextweaver-token": TOKEN, "authorization": "Bearer sk-ledger", "x-scenario": name,
                   "x-contextweaver-session": f"ledger-{wire}", "content-type": "application/json"}  # fmt: skip
        content = json.dumps(body_of(wire, messages, streamed))
        with httpx.stream("POST", base + PATHS[wire], content=content, headers=headers, timeout=30) as answer:
            assert answer.status_code == 200, (wire, name, answer.read())
            if name == "hang-up":
                seen = b""
                for chunk in answer.iter_raw():  # the caller leaves after the usage, before the stream's end
                    seen += chunk
                    if LAST_USAGE[wire] in seen and seen.endswith(b"\n\n"):
                        break
            else:
                answer.read()
        messages += step(wire, n + 1)


def test_every_answer_is_one_row_and_metrics_equal_the_rows(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with (
        FakeLLMServer(scripted) as upstream,
        running_proxy(SQLiteStore(db), upstream.base_url, auth_token=TOKEN) as (url, _),
    ):
        base = url.removesuffix("/v1")
        for wire in PATHS:
            run_session(base, wire)
        store = SQLiteStore(db)
        wanted = len(SCENARIOS) * len(PATHS)
        wait_for(lambda: len(answered(store)) == wanted, timeout=10)
        time.sleep(0.3)  # a second row for one answer would come now
        listing = httpx.get(base + "/contextweaver/sessions", headers={"x-contextweaver-token": TOKEN,
                            "authorization": "Bearer sk-ledger"}, timeout=10)  # fmt: skip
        scraped = metrics(url)
    assert len(upstream.requests) == wanted
    assert listing.status_code == 200, listing.text  # was a 503: "integer overflow" summing 2^62 twice
    listed = CliRunner().invoke(main, ["sessions", "list", "--store", str(db)])
    assert listed.exit_code == 0, listed.output

    for wire in PATHS:
        rows = store.requests(f"ledger-{wire}")
        assert len(rows) == len(SCENARIOS), (wire, rows)
        named = dict(zip([s[0] for s in SCENARIOS], rows, strict=True))
        for name, row in named.items():
            assert row["usage"] in ("reported", "missing", "malformed"), (wire, name, row)
            assert row["usage"] == "reported" or row["usage_note"], (wire, name, row)
            assert (row["input_tokens"] or 0) <= MAX_TOKENS, (wire, name, row)
        assert named["plain"]["usage"] == "reported" and named["plain"]["usage_note"] is None
        assert "broke off" in named["cut"]["usage_note"], named["cut"]
        for name, raw in (("huge", HUGE), ("big", BIG), ("big-streamed", BIG)):
            row = named[name]
            assert row["usage"] == "reported" and row["input_tokens"] == MAX_TOKENS, (wire, row)
            assert str(raw) in row["usage_note"], (wire, row)
        assert named["garbage"]["usage"] == "malformed" and "lots" in named["garbage"]["usage_note"]
        hung = named["hang-up"]
        assert hung["usage"] == "reported" and hung["input_tokens"] == 100, (wire, hung)
        assert "hung up" in (hung["usage_note"] or ""), (wire, hung)
        if wire == "anthropic":  # message_start carries the input the provider bills, cut or not
            assert named["cut"]["usage"] == "reported" and named["cut"]["input_tokens"] == 100

        def metric(name: str, wire: str = wire, **labels: str) -> float:
            return scraped.get((name, tuple(sorted({"wire": wire, **labels}.items()))), 0.0)

        for kind, column in (("input", "input_tokens"), ("output", "output_tokens"),
                             ("cache_read", "cache_read_tokens"), ("cache_write", "cache_write_tokens")):  # fmt: skip
            stored = sum(row[column] or 0 for row in rows)
            assert metric("contextweaver_provider_tokens_total", kind=kind) == stored, (wire, kind)
        for usage in ("reported", "missing", "malformed"):
            stored = sum(1 for row in rows if row["usage"] == usage)
            assert metric("contextweaver_usage_answers_total", usage=usage) == stored, (wire, usage)
        assert (
            abs(metric("contextweaver_billed_input_tokens_total") - sum(r["billed"] or 0 for r in rows)) < 1
        )


@pytest.mark.slow
@pytest.mark.parametrize("wire", list(PATHS))
def test_a_proxy_killed_mid_session_leaves_a_row_per_request(tmp_path: Path, wire: str) -> None:
    """SIGKILL right after 20 answers kept 11 rows of 20 (each was written after its answer had passed):
    each request's row is now written before it goes upstream, and says so when its answer never was. The
    requests outside any session sent last (a conversation's first, a wire's passthrough) keep theirs too."""

    def plain(request: Request) -> Reply:
        return Reply(text="done")

    with FakeLLMServer(plain) as upstream:
        process, port, _, db = start_serve(tmp_path, upstream.base_url, "--weaving-processes", "1")
        try:
            base = f"http://127.0.0.1:{port}"
            wait_for(lambda: _serving(base), timeout=60)
            messages = first_messages(wire) + step(wire, 0)
            headers = {"x-contextweaver-session": "killed", "authorization": "Bearer sk-killed"}
            for n in range(20):
                answer = httpx.post(base + PATHS[wire], json=body_of(wire, messages, False), headers=headers,
                                    timeout=30)  # fmt: skip
                assert answer.status_code == 200, answer.text
                messages += step(wire, n + 1)
            outside = [body_of(wire, first_messages(wire), False)]
            if wire == "responses":
                outside.append({**outside[0], "previous_response_id": "resp_1"})
            for body in outside:
                answer = httpx.post(base + PATHS[wire], json=body, headers={"authorization": "Bearer sk-killed"},
                                    timeout=30)  # fmt: skip
                assert answer.status_code == 200, answer.text
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait(10)
    store = SQLiteStore(db)
    rows = store.requests("killed")
    assert store.session("killed").steps == 20  # type: ignore[union-attr]
    assert len(rows) == 20, rows
    passed = [row for owner in store.passed_totals() for row in store.passed_requests(owner)]
    assert len(passed) == len(outside), passed
    for row in rows + passed:
        assert row["usage"] == "reported" or row["usage_note"] == NO_ANSWER, row


def _serving(base: str) -> bool:
    try:
        return httpx.get(base + "/contextweaver/health", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def test_a_store_holding_counts_of_2_62_is_clamped_when_opened(tmp_path: Path) -> None:
    """Rows an older proxy stored with 2^62 input tokens made every listing of the store fail ("integer
    overflow"): the migration that adds `usage_note` clamps them and notes the raw value."""
    db = tmp_path / "s.db"
    store = SQLiteStore(db)
    store.create_session("old", [{"role": "user", "content": "task"}], {})
    row = {"at": 1.0, "wire": "chat", "status": 200, "streamed": 0, "step": 1, "added": 1, "latency_ms": 1.0,
           "sent_tokens": 1, "full_tokens": 1, "tool_tokens": 0, "cached_tokens": 0, "sim_sent": 1.0,
           "sim_full": 1.0, "usage": "reported", "input_tokens": BIG, "output_tokens": 3}  # fmt: skip
    store.record_request("old", row)
    store.record_request("old", row)
    store.close()
    raw = sqlite3.connect(db)
    with raw:  # the store as the version before this one left it
        raw.execute("ALTER TABLE cw_requests DROP COLUMN usage_note")
        raw.execute("DELETE FROM cw_schema WHERE version = 8")
    raw.close()
    totals = SQLiteStore(db).request_totals()["old"]
    assert totals["input_tokens"] == 2 * MAX_TOKENS and totals["output_tokens"] == 6
    notes = [r["usage_note"] for r in SQLiteStore(db).requests("old")]
    assert notes == [f"input_tokens reported as {BIG}, clamped"] * 2
