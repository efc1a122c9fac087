"""`contextweaver demo` and `contextweaver fake-upstream`: a cut and a recall with no key, the same bytes for
the same request on every wire."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
from click.testing import CliRunner

from contextweaver.cli import main
from contextweaver.store.sqlite import SQLiteStore
from contextweaver.testing.fake_upstream import fake_upstream
from contextweaver.testing.scripted_agent import SYSTEM, TASK, TOOLS

BASH = TOOLS[0]["function"]
NOTE = ("[ContextWeaver working state] steps #1-#3 were left out.\n"
        "- reread step #N: `curl -s http://127.0.0.1:9/contextweaver/recall/abc123/N`")  # fmt: skip


def chat(messages: list[dict[str, object]]) -> dict[str, object]:
    return {"model": "m", "messages": messages, "tools": TOOLS}


def test_the_fake_upstream_answers_each_wire_with_the_same_call_for_the_same_request() -> None:
    with fake_upstream() as upstream:
        base = upstream.base_url
        first = chat([{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}])
        one, two = (httpx.post(base + "/chat/completions", json=first).json() for _ in range(2))
        assert one["choices"] == two["choices"]  # the same call; the second read from the prefix cache
        assert one["usage"]["prompt_tokens_details"]["cached_tokens"] == 0
        assert two["usage"]["prompt_tokens_details"]["cached_tokens"] == two["usage"]["prompt_tokens"] > 0
        call = one["choices"][0]["message"]["tool_calls"][0]
        assert json.loads(call["function"]["arguments"]) == {"command": "cat src/shop/module_1.py"}
        later = first["messages"] + [  # type: ignore[operator]
            {"role": "assistant", "content": None, "tool_calls": [{**call, "id": "call_4"}]},
            {"role": "tool", "tool_call_id": "call_4", "content": "..."},
        ]
        answer = httpx.post(base + "/chat/completions", json=chat(later)).json()
        assert answer["choices"][0]["message"]["tool_calls"][0]["id"] == "call_5"  # after the newest call

        claude = {"model": "c", "max_tokens": 64, "system": SYSTEM, "messages": [{"role": "user", "content": NOTE}],
                  "tools": [{"name": "Bash", "input_schema": BASH["parameters"]}]}  # fmt: skip
        block = httpx.post(upstream.url + "/v1/messages", json=claude).json()["content"][0]
        assert block["type"] == "tool_use" and block["input"] == {
            "command": "curl -s http://127.0.0.1:9/contextweaver/recall/abc123/1"  # the note's recall, once
        }
        codex = {"model": "x", "input": [{"role": "user", "content": TASK}],
                 "tools": [{"type": "function", **BASH}]}  # fmt: skip
        item = httpx.post(base + "/responses", json=codex).json()["output"][0]
        assert item["type"] == "function_call" and json.loads(item["arguments"])["command"].startswith("cat ")
        plain = httpx.post(
            base + "/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        )
        assert plain.json()["choices"][0]["message"]["content"].startswith("fake-upstream:")


def test_the_demo_cuts_its_session_and_the_proxy_answers_the_recall(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    result = CliRunner().invoke(main, ["demo", "--port", "0", "--pace", "0", "--no-wait", "--store", str(db)])
    assert result.exit_code == 0, result.output
    assert re.search(
        r"dashboard: http://127\.0\.0\.1:\d+/contextweaver/dashboard\?token=\S{24,}", result.output
    )
    store = SQLiteStore(db)
    cuts = [row for row in store.requests("demo-1") if row["cut"]]
    assert cuts and json.loads(cuts[0]["cut"])["note"].startswith("[ContextWeaver")
    recalled = [item.step for item in store.steps("demo-1") if item.step.action.startswith("curl -s http")]
    assert len(recalled) == 1 and "Shop module 1" in recalled[0].observation  # the left-out step, read back
    assert "1 recall(s) answered" in result.output
    again = CliRunner().invoke(
        main, ["demo", "--port", "0", "--pace", "0", "--turns", "3", "--no-wait", "--store", str(db)]
    )
    assert (
        again.exit_code == 0 and "session: http" in again.output and "/session/demo-2" in again.output
    )  # a kept store
