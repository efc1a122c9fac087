"""Recall by words through the proxy (`GET /contextweaver/recall/CAP/?q=words&budget=N`): the route ranks what
the session's saved cut left out, over real HTTP, and `contextweaver mcp --url` asks it instead of reading
every step back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import openai

from contextweaver.config import WeaverConfig
from contextweaver.integrations.recall_memory import ProxyMemory
from contextweaver.serve.sessions.recall import QUERY_HEADER, proxy_hint
from contextweaver.store.sqlite import SQLiteStore
from contextweaver.testing.fake_server import FakeLLMServer
from tests.serve.harness import run_tool, running_proxy, task
from tests.serve.test_proxy_recall import client, numbered_reply, recall_path

LAZY = WeaverConfig(recall_hint=proxy_hint("127.0.0.1", 9))
"""The default lazy mode, which saves its cut with the session (what the route reads)."""
FAILING = "FAILED tests/test_pager.py::test_last_page - AssertionError: assert 7 == 8"


def run_agent(api: openai.OpenAI, marker: str, steps: int) -> list[dict[str, Any]]:
    """A tool-calling loop whose second output is a failing pytest run; the others are file listings."""
    messages = task(marker)
    for n in range(1, steps + 1):
        completion = api.chat.completions.create(model="fake", messages=messages)  # type: ignore[arg-type]
        message = completion.choices[0].message.model_dump(exclude_none=True)
        messages.append(message)
        for call in message["tool_calls"]:
            output = run_tool(call["function"]["arguments"], marker)
            if n == 2:
                output = f"collected 12 items\n\n{FAILING}\n1 failed, 11 passed in 0.41s"
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": output})
    return messages


def test_a_query_ranks_what_the_cut_left_out_over_http_and_the_mcp_binding_asks_it(tmp_path: Path) -> None:
    with (
        FakeLLMServer(numbered_reply()) as upstream,
        running_proxy(SQLiteStore(tmp_path / "s.db"), upstream.base_url, LAZY, budget=2500) as (url, _),
    ):
        messages = run_agent(client(url, "run-Q"), "run-Q", 14)
        base = url.removesuffix("/v1") + recall_path(upstream.requests[-1].body)
        found = httpx.get(base, params={"q": "which test failed pytest AssertionError", "budget": "1000"})
        newest = json.loads(messages[-2]["tool_calls"][0]["function"]["arguments"])["command"].split()[1]
        held = httpx.get(base, params={"q": newest})
        empty = httpx.get(base, params={"q": "  ?! "})
        long = httpx.get(base, params={"q": "x" * 2001})
        budget = httpx.get(base, params={"q": "pytest", "budget": "lots"})
        superscript = httpx.get(
            base, params={"q": "pytest", "budget": "2²"}
        )  # str.isdigit() takes it, int() not
        unknown = httpx.get(base[:-25] + "0" * 24 + "/", params={"q": "pytest"})
        memory = ProxyMemory(base)
        through_mcp = memory.recall("which test failed pytest AssertionError", 1000)
    assert found.status_code == 200 and found.headers[QUERY_HEADER] == "query"
    assert found.text.startswith('[recall "which test failed pytest AssertionError": ')
    assert "[step 2: `cat file_" in found.text and f"\n{FAILING}\n" in found.text  # verbatim, under its label
    last = len([m for m in messages if m["role"] == "tool"])
    assert f"[step {last}: " not in held.text  # the newest step is held whole: not searched
    assert held.status_code == 200 and " not held whole" in held.text
    assert empty.status_code == 400 and "words to search by" in empty.text
    assert long.status_code == 400 and "at most 2000 characters" in long.text
    assert budget.status_code == 400 and "budget must be a number" in budget.text
    assert superscript.status_code == 400, superscript.text
    assert unknown.status_code == 404 and "run-Q" not in unknown.text
    assert memory._asks_proxy is True  # one request, ranked by the proxy, not every step read back
    assert through_mcp == found.text.rstrip("\n")
