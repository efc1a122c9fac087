"""The proxy's budget advice (weaving/budget.py): a refusal's number works when set, tools included.

A root refusal names a value that holds this request and the next one (room for a typical step), not one
the second request overruns; a client that answers a refusal by sending more tool definitions (Claude Code
sends its deferred tools inline) is told the value that holds its first attempt, then the retry's. A
session's first request logs the root's size with its tools and the suggested budget.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from contextweaver.config import WeaverConfig
from contextweaver.serve.wires.wire import tool_tokens
from contextweaver.store.sqlite import SQLiteStore
from contextweaver.testing.fake_server import FakeLLMServer
from contextweaver.weaving.budget import ROOM_STEPS, TYPICAL_STEP
from tests.serve.harness import running_proxy, task, tool_call_reply


def tools(count: int) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": f"tool_{n}", "description": f"does thing {n} " * 60,
                                              "parameters": {"type": "object"}}} for n in range(count)]  # fmt: skip


def run(
    tmp: Path, budget: int, messages: list[dict[str, Any]], sent_tools: list[Any], turns: int
) -> list[httpx.Response]:
    """An agent loop of `turns` requests through a proxy with `budget`; stops at the first refusal."""
    answers = []
    with FakeLLMServer(tool_call_reply) as upstream, running_proxy(SQLiteStore(tmp / f"{budget}.db"), upstream.base_url, WeaverConfig(), budget=budget) as (url, _):  # fmt: skip
        for _ in range(turns):
            answer = httpx.post(
                f"{url}/chat/completions", json={"model": "m", "messages": messages, "tools": sent_tools}
            )
            answers.append(answer)
            if answer.status_code != 200:
                break
            reply = answer.json()["choices"][0]["message"]
            output = "\n".join(f"line {i} of the file" for i in range(60))
            messages = [
                *messages,
                reply,
                {"role": "tool", "tool_call_id": reply["tool_calls"][0]["id"], "content": output},
            ]
    return answers


def least(answer: httpx.Response) -> int:
    found = re.search(
        r"raise the budget \(contextweaver serve --budget\) to at least (\d+) tokens", answer.text
    )
    assert answer.status_code == 400 and found, answer.text
    return int(found.group(1))


def test_a_root_refusal_names_a_budget_that_holds_the_next_requests_too(tmp_path: Path) -> None:
    sent = tools(4)
    (refused,) = run(tmp_path, 500, task("root"), sent, 1)
    value = least(refused)
    assert f"tool definitions ({tool_tokens({'tools': sent}):,} tokens)" in refused.text
    answers = run(tmp_path, value, task("root"), sent, 4)
    assert [a.status_code for a in answers] == [200] * 4, answers[-1].text


def test_a_retry_with_more_tools_is_told_the_value_that_holds_the_first_attempt(tmp_path: Path) -> None:
    first, more = tools(3), tools(9)
    with FakeLLMServer(tool_call_reply) as upstream, running_proxy(SQLiteStore(tmp_path / "s.db"), upstream.base_url, WeaverConfig(), budget=500) as (url, _):  # fmt: skip
        attempts = [httpx.post(f"{url}/chat/completions", json={"model": "m", "messages": task("retry"), "tools": sent})
                    for sent in (first, first, more)]  # fmt: skip
    value = least(attempts[0])
    assert least(attempts[1]) == value  # the same attempt again: the same answer
    retry = attempts[2].json()["error"]["message"]
    assert least(attempts[2]) == value, retry  # with it, the retry never happens
    extra = tool_tokens({"tools": more}) - tool_tokens({"tools": first})
    needed = int(re.search(r"this retry sends ([\d,]+) more .* needs at least (\d+)", retry).group(2))  # type: ignore[union-attr]
    assert (
        f"this retry sends {extra:,} more" in retry and needed >= value + extra - 100
    )  # both rounded up to hundreds
    answers = run(tmp_path, value, task("retry"), first, 3)
    assert [a.status_code for a in answers] == [200] * 3


def test_a_sessions_first_request_logs_its_root_with_tools_and_the_suggested_budget(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="contextweaver")
    sent = tools(2)
    run(tmp_path, 20_000, task("advice"), sent, 3)
    lines = [r.getMessage() for r in caplog.records if " root " in r.getMessage()]
    assert len(lines) == 1, lines  # once per session
    found = re.search(r"root ([\d,]+) tokens, ([\d,]+) of them tool definitions \(--budget 20000; least (\d+), "
                      r"suggested (\d+): a cut about every 8 steps\)", lines[0])  # fmt: skip
    assert found, lines[0]
    root, tool, low, suggested = (int(g.replace(",", "")) for g in found.groups())
    assert tool == tool_tokens({"tools": sent}) and root > tool
    assert low >= root and suggested >= root + ROOM_STEPS * TYPICAL_STEP
    assert json.dumps(lines)  # one line, no traceback
