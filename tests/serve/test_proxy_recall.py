"""Recall through the proxy: the note's `curl` returns an omitted step byte for byte, after a restart too,
and one session's handle reads nothing of another."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from itertools import count
from pathlib import Path

import httpx
import openai
import pytest

from contextweaver.serve.sessions.recall import proxy_hint
from contextweaver.store.sqlite import SQLiteStore
from contextweaver.testing.fake_server import FakeLLMServer, Reply, Request
from tests.serve.harness import PER_STEP, run_tool, running_proxy, task, tool_call_reply
from tests.serve.test_proxy_openai import agent_loop

HINT = re.compile(r"curl -s http://127\.0\.0\.1:\d+(/contextweaver/recall/[0-9a-f]{24}/)N")
CONFIG = PER_STEP.model_copy(update={"recall_hint": proxy_hint("127.0.0.1", 9)})
"""The proxy's hint (port 9 stands in for the one the test server gets: the path is what is read)."""


def numbered_reply() -> Callable[[Request], Reply]:
    """`tool_call_reply`, each call naming a new file (under a budget the woven history stops growing)."""
    calls = count(1)

    def reply(request: Request) -> Reply:
        answer = tool_call_reply(request)
        n = next(calls)
        call = answer.body["choices"][0]["message"]["tool_calls"][0]["function"]
        call["arguments"] = re.sub(r"file_\d+", f"file_{n}", call["arguments"])
        return answer

    return reply


def client(url: str, session: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=url, api_key="k", max_retries=0, default_headers={"x-contextweaver-session": session}
    )


def recall_path(body: dict) -> str:
    """The recall path the note of the context the upstream received gives."""
    text = "\n".join(str(m.get("content")) for m in body["messages"])
    match = HINT.search(text)
    assert match, "the note gives the proxy's recall command"
    return match.group(1)


def test_the_notes_curl_returns_the_step_after_a_restart_and_only_its_own_session(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    mine, other = task("run-A"), task("run-B")
    with FakeLLMServer(numbered_reply()) as upstream:
        with running_proxy(SQLiteStore(path), upstream.base_url, CONFIG, budget=2500) as (url, _):
            agent_loop(client(url, "run-A"), mine, "run-A", 12)
            path_a = recall_path(upstream.requests[-1].body)
            agent_loop(client(url, "run-B"), other, "run-B", 12)
            path_b = recall_path(upstream.requests[-1].body)
            base = url.removesuffix("/v1")
            before = httpx.get(base + path_a + "2")
            last = upstream.requests[-1].body["messages"]
            assert any(
                re.search(r"omitted, #\d+[)\]]", str(m.get("content"))) for m in last
            )  # a mark in place
        with running_proxy(SQLiteStore(path), upstream.base_url, CONFIG, budget=2500) as (url, _):
            base = url.removesuffix("/v1")
            after = httpx.get(base + path_a + "2")
            other_answer = httpx.get(base + path_b + "2")
            wrong = httpx.get(base + path_a[:-25] + "0" * 24 + "/2")
            several = httpx.get(base + path_a + "2-3")
    assert path_a != path_b
    step2 = mine[4]  # the root's two messages, the first step's call and output, then step 2's call
    output2 = mine[5]["content"]
    assert before.status_code == 200 and before.text == after.text  # the same bytes after a restart
    assert before.text.startswith("[step 2: ") and output2 in before.text and "run-A" in output2
    assert step2["tool_calls"][0]["function"]["arguments"] in before.text
    assert "run-A" not in other_answer.text and "run-B" in other_answer.text  # each handle its own session
    assert wrong.status_code == 404 and "run-" not in wrong.text
    assert several.status_code == 200 and "[step 3: " in several.text


def test_a_session_stored_before_recall_goes_on_without_it(tmp_path: Path) -> None:
    """Its settings name no recall: reopened, it weaves as it did (no handle, the same prefix)."""
    from contextweaver.config import WeaverConfig
    from contextweaver.records import Step
    from contextweaver.store import Session

    store = SQLiteStore(tmp_path / "s.db")
    session = Session.create(store, "old", task("old"), WeaverConfig(mode="per_step", recall=False))
    info = store.session("old")
    assert info is not None
    with store._write() as tx:  # the settings as a release before recall stored them
        old = {k: v for k, v in info.config.items() if k not in ("recall", "recall_hint")}
        tx.execute("UPDATE cw_sessions SET config = ? WHERE id = ?", (json.dumps(old), "old"))
    for i in range(8):
        session.add_step(Step(action=f"cat f{i}.py", observation="\n".join(f"line {j}" for j in range(30))))
    reopened = Session.open(store, "old")
    assert not reopened.weaver.config.recall
    assert "step 1)" not in reopened.context().text() and "lines omitted)" in reopened.context().text()


BIG_TOOLS = [
    {"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}},
    {
        "type": "function",
        "function": {
            "name": "docs",
            "description": " ".join(f"rule{i}" for i in range(3000)),
            "parameters": {"type": "object"},
        },
    },  # fmt: skip
]
"""About 6k tokens of tool definitions beside the messages, as Claude Code's ~15k are under its budgets."""


def ask(api: openai.OpenAI, messages: list[dict]) -> dict:
    """The upstream's answer to `messages` with the large tools, appended to them."""
    completion = api.chat.completions.create(model="fake", messages=messages, tools=BIG_TOOLS)  # type: ignore[arg-type]
    messages.append(completion.choices[0].message.model_dump(exclude_none=True))
    return messages[-1]


def test_a_recalled_page_fits_whole_in_the_next_context_beside_large_tools(tmp_path: Path) -> None:
    """A page sized from the budget alone (10k) outgrew the room the tools leave: the next weave trimmed it."""
    messages = task("run-T")
    store = SQLiteStore(tmp_path / "s.db")
    with (
        FakeLLMServer(numbered_reply()) as upstream,
        running_proxy(store, upstream.base_url, CONFIG, budget=10_000) as (url, _),
    ):
        api = client(url, "run-T")
        for n in range(10):  # step 2 reads a long file: a recall of it takes pages
            for call in ask(api, messages)["tool_calls"]:
                output = run_tool(call["function"]["arguments"], "run-T", 600 if n == 1 else 30)
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": output})
        command = f"curl -s {url.removesuffix('/v1')}{recall_path(upstream.requests[-1].body)}2"
        page = httpx.get(command.removeprefix("curl -s "))
        call = {"id": "call_recall", "type": "function",
                "function": {"name": "bash", "arguments": json.dumps({"command": command})}}  # fmt: skip
        messages += [
            {"role": "assistant", "content": "Reading step 2 again.", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_recall", "content": page.text},
        ]
        ask(api, messages)
    assert page.status_code == 200 and page.text.startswith("[page 1 of ")  # the step takes several pages
    sent = upstream.requests[-1].body["messages"]
    assert {"role": "tool", "tool_call_id": "call_recall", "content": page.text} in sent  # whole, not trimmed


def test_a_malformed_number_is_a_400_not_a_500_and_the_log_keeps_no_capability(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A handle or page of more than 4,300 digits (past int()'s limit) or a digit that str.isdigit() takes but
    int() refuses (`²`) was a 500 with a traceback; each recall 4xx wrote the capability to the log (issue 53)."""
    caplog.set_level(logging.INFO, logger="contextweaver")
    store = SQLiteStore(tmp_path / "s.db")
    with (
        FakeLLMServer(numbered_reply()) as upstream,
        running_proxy(store, upstream.base_url, CONFIG, budget=2500) as (url, _),
    ):
        agent_loop(client(url, "run-A"), task("run-A"), "run-A", 12)
        base = url.removesuffix("/v1") + recall_path(upstream.requests[-1].body)
        asked = {
            "long handle": httpx.get(base + "9" * 5000),
            "long range": httpx.get(base + "1-" + "9" * 5000),
            "long page": httpx.get(base + "2", params={"page": "9" * 5000}),
            "superscript page": httpx.get(base + "2", params={"page": "²"}),
            "superscript handle": httpx.get(base + "²"),
            "arabic-indic page": httpx.get(base + "2", params={"page": "٣"}),
            "page zero": httpx.get(base + "2", params={"page": "0"}),
        }
    for name, answer in asked.items():
        assert answer.status_code in (400, 404), (name, answer.status_code, answer.text[:300])
        assert "contextweaver recall" in answer.text and len(answer.text) < 400, (name, answer.text[:300])
    cap = base.rstrip("/").rsplit("/", 1)[1]
    assert "/contextweaver/recall/***/" in caplog.text and cap not in caplog.text, caplog.text[-2000:]
