"""Requests forwarded outside any session are rows too, per owner, and /metrics still equals the rows.

On each wire: the first request of a conversation (no step yet: no session to store it under), plain and
as a stream the upstream breaks off; a request the wire passes through as sent (Anthropic's `compaction`
block, Responses' `previous_response_id`); and a session's requests the loop guard sends unwoven. Each
answer the upstream gave is one row, with its usage or marked missing with the reason; another
credential's rows are never shown to the first.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
from click.testing import CliRunner

from contextweaver.cli import main
from contextweaver.serve.ledger.metering import NO_STEP_YET
from contextweaver.serve.sessions.loop_guard import LIMIT
from contextweaver.store.sqlite import SQLiteStore
from contextweaver.testing import fake_wire
from contextweaver.testing.fake_server import FakeLLMServer, Reply, Request
from tests.serve.harness import running_proxy
from tests.serve.test_metering import TOKEN, metrics, wait_for
from tests.serve.test_usage_ledger import PATHS, body_of, first_messages, step, usage_of

LOOPS = LIMIT + 1
"""Requests of the looping session: the last two go out unwoven."""


def replying(request: Request) -> Reply:
    """The answer in the request's wire shape, reporting `x-tokens` input tokens; `x-cut` breaks the stream."""
    tokens = int(request.headers.get("x-tokens", "7"))
    wire = next(w for w, path in PATHS.items() if request.path.startswith(path))
    cut = {"cut_after": 1} if request.headers.get("x-cut") else {}
    usage, model = usage_of(wire, tokens), str(request.body.get("model"))
    if wire == "anthropic":
        body = fake_wire.anthropic_message(model, [{"type": "text", "text": "done"}])
        return Reply(body={**body, "usage": usage}, **cut)  # type: ignore[arg-type]
    if wire == "responses":
        item = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}
        return Reply(body={**fake_wire.responses_object(model, [item]), "usage": usage}, **cut)  # type: ignore[arg-type]
    if request.body.get("stream"):
        return Reply(text="done", usage=usage, **cut)  # type: ignore[arg-type]
    body = {"id": "c", "object": "chat.completion", "model": model, "usage": usage,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "done"}, "finish_reason": "stop"}]}  # fmt: skip
    return Reply(body=body)


def same_step(wire: str, n: int) -> list[dict[str, Any]]:
    """The same call with the same output (a new call id each time): an agent in a loop."""
    return step(wire, n, "ls", "nothing changed\n")


def passed_as_sent(wire: str) -> dict[str, Any] | None:
    """A request the wire forwards as sent, whatever its history (None: the chat wire has none)."""
    if wire == "anthropic":
        messages = [*first_messages(wire), {"role": "assistant", "content": [{"type": "compaction",
                    "content": "what came before"}]}, {"role": "user", "content": "go on"}]  # fmt: skip
        return body_of(wire, messages, False)
    if wire == "responses":
        return {**body_of(wire, first_messages(wire), False), "previous_response_id": "resp_1"}
    return None


def post(base: str, wire: str, body: dict[str, Any], key: str, tokens: int, **headers: str) -> httpx.Response:
    sent = {
        "x-contextweaver-token": TOKEN,
        "authorization": f"Bearer {key}",
        "x-tokens": str(tokens),
        **headers,
    }
    return httpx.post(base + PATHS[wire], json=body, headers=sent, timeout=30)


def run(base: str, wire: str, key: str) -> tuple[int, list[str]]:
    """Every kind of request outside a session, and a looping session; the answers given and the
    `x-contextweaver-*` marks of the requests that went out unwoven."""
    marks: list[str] = []
    first = post(base, wire, body_of(wire, first_messages(wire), False), key, 11)
    assert first.status_code == 200, first.text
    cut = post(base, wire, body_of(wire, first_messages(wire), True), key, 13, **{"x-cut": "1"})
    assert cut.status_code == 200, cut.text
    given = 2
    passing = passed_as_sent(wire)
    if passing is not None:
        passed = post(base, wire, passing, key, 17)
        assert passed.status_code == 200, passed.text
        marks.append(passed.headers["x-contextweaver-passthrough"])
        given += 1
    messages = first_messages(wire)
    for n in range(LOOPS):
        messages += same_step(wire, n)
        looped = post(base, wire, body_of(wire, messages, False), key, 100 + n,
                      **{"x-contextweaver-session": f"loop-{wire}"})  # fmt: skip
        assert looped.status_code == 200, looped.text
        marks += (
            [looped.headers["x-contextweaver-fallback"]]
            if "x-contextweaver-fallback" in looped.headers
            else []
        )
        given += 1
    return given, marks


def rows_of(store: SQLiteStore) -> list[dict[str, Any]]:
    """Every stored row, in a session or not."""
    in_sessions = [row for sid in store.request_totals() for row in store.requests(sid)]
    return in_sessions + [row for owner in store.passed_totals() for row in store.passed_requests(owner)]


def test_requests_outside_a_session_are_rows_and_metrics_equal_the_rows(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with (
        FakeLLMServer(replying) as upstream,
        running_proxy(SQLiteStore(db), upstream.base_url, auth_token=TOKEN) as (url, _),
    ):
        base = url.removesuffix("/v1")
        given: dict[str, int] = {}
        for wire in PATHS:
            given[wire], marks = run(base, wire, "sk-first")
            assert marks.count("repeated-call") == LOOPS - LIMIT + 1, (wire, marks)
        other = post(base, "chat", body_of("chat", first_messages("chat"), False), "sk-other", 1000)
        assert other.status_code == 200
        given["chat"] += 1
        store = SQLiteStore(db)
        wait_for(
            lambda: (
                all(row["status"] for row in rows_of(store)) and len(rows_of(store)) == len(upstream.requests)
            )
        )
        time.sleep(0.3)  # a second row for one answer would come now
        scraped = metrics(url)
        headers = {"x-contextweaver-token": TOKEN, "authorization": "Bearer sk-first"}
        listing = httpx.get(base + "/contextweaver/sessions", headers=headers, timeout=10).json()
        passed = httpx.get(base + "/contextweaver/passed", headers=headers, timeout=10).json()

    rows = rows_of(store)
    assert len(upstream.requests) == sum(given.values()) == len(rows)
    for wire in PATHS:
        mine = [row for row in rows if row["wire"] == wire]
        assert len(mine) == given[wire], (wire, mine)
        for row in mine:
            assert row["usage"] == "reported" or row["usage_note"], (wire, row)
        loop = store.requests(f"loop-{wire}")
        assert len(loop) == LOOPS and [r["fallback"] for r in loop][-2:] == ["repeated-call"] * 2, loop
        assert [r["input_tokens"] for r in loop] == [100 + n for n in range(LOOPS)], loop

        def metric(name: str, wire: str = wire, **labels: str) -> float:
            return scraped.get((name, tuple(sorted({"wire": wire, **labels}.items()))), 0.0)

        for kind, column in (("input", "input_tokens"), ("output", "output_tokens"),
                             ("cache_read", "cache_read_tokens"), ("cache_write", "cache_write_tokens")):  # fmt: skip
            assert metric("contextweaver_provider_tokens_total", kind=kind) == sum(
                r[column] or 0 for r in mine
            )
        for usage in ("reported", "missing", "malformed"):
            stored = sum(1 for row in mine if row["usage"] == usage)
            assert metric("contextweaver_usage_answers_total", usage=usage) == stored, (wire, usage)
        for name, column in (("contextweaver_billed_input_tokens_total", "billed"),
                             ("contextweaver_passthrough_input_tokens_total", "passthrough")):  # fmt: skip
            assert abs(metric(name) - sum(r[column] or 0 for r in mine)) < 1e-6, (wire, name)

    outside = [row for row in rows if "reason" in row]
    assert {row["reason"] for row in outside} == {NO_STEP_YET, "compaction", "previous_response_id"}
    broken = [row for row in outside if row["streamed"]]
    assert len(broken) == 3 and all("broke off" in row["usage_note"] for row in broken), broken
    assert [row["usage"] for row in broken if row["wire"] == "chat"] == ["missing"], broken
    firsts = [row for row in outside if row["reason"] == NO_STEP_YET and not row["streamed"]]
    assert sorted(row["input_tokens"] for row in firsts) == [11, 11, 11, 1000]

    # the caller sees its own rows outside sessions, and counts them in its totals; never another's
    # (the first event of Anthropic's and Responses' streams carries the input billed: 13 each, broken off)
    assert sorted(row["input_tokens"] or 0 for row in passed["requests"]) == [0, 11, 11, 11, 13, 13, 17, 17]
    assert listing["passed"]["requests"] == 8 and listing["passed"]["input_tokens"] == 33 + 26 + 34
    assert listing["cost"]["requests"] == 8 + 3 * LOOPS
    listed = CliRunner().invoke(main, ["sessions", "list", "--store", str(db)])
    assert listed.exit_code == 0 and "outside sessions" in listed.output, listed.output
    shown = CliRunner().invoke(main, ["sessions", "passed", "--store", str(db)])
    assert shown.exit_code == 0, shown.output
    assert sorted(page["cost"]["requests"] for page in json.loads(shown.output).values()) == [1, 8]
