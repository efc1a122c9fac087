"""The live dashboard in a real headless Chromium: it renders, its figures are the API's, it redraws
when a request arrives (no reload), and agent output in notes and reasons stays text.

CW_SCREENSHOTS=DIR keeps the screenshots taken (sessions, session, graph) in DIR.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anthropic
import httpx
import pytest

from contextweaver.config import WeaverConfig
from contextweaver.serve.ledger.inspect import money
from contextweaver.store.sqlite import SQLiteStore
from contextweaver.testing.fake_server import FakeLLMServer, Reply
from tests.serve import test_proxy_anthropic as claude
from tests.serve.cdp import chromium_page
from tests.serve.harness import run_tool, running_proxy
from tests.serve.test_metering import TOKEN, Upstream, answered, wait_for

pytestmark = pytest.mark.browser
KEY = "sk-ant-dashboard"
HOSTILE = "m<img/src=x/onerror=document.title='PWNED'>"
FAILING = """F..                                                                      [100%]
=================================== FAILURES ===================================
___________________________________ test_x ____________________________________
    def test_x():
>       assert parse("a") == 2
E       assert 1 == 2
tests/test_a.py:3: AssertionError
=========================== short test summary info ============================
FAILED tests/test_a.py::test_x - assert 1 == 2
1 failed, 2 passed in 0.12s"""
PASSING = "...                                                                      [100%]\n3 passed in 0.10s"
FIGURES = "JSON.stringify([...document.querySelectorAll('#totals b')].map(b => b.textContent))"


class RunsTestsUpstream(Upstream):
    """Claude's answers, asking for the test run on its 3rd and 6th answers."""

    def __call__(self, request: Any) -> Reply:
        reply = super().__call__(request)
        if len(self.sent["anthropic"]) in (3, 6):
            reply.body["content"][1]["input"]["command"] = "python -m pytest -q tests/test_a.py"  # type: ignore[index]
        return reply


def agent_loop(client: anthropic.Anthropic, messages: list[dict[str, Any]], turns: int) -> None:
    """Claude Code's loop (streamed), with a shell whose first test run fails and whose next one passes."""
    runs = sum("pytest" in json.dumps(m) for m in messages if m["role"] == "assistant")
    for _ in range(turns):
        request = dict(
            model="claude-test", max_tokens=256, system=claude.SYSTEM, messages=messages, tools=claude.TOOLS
        )
        with client.messages.stream(**request) as events:  # type: ignore[arg-type]
            answer = events.get_final_message()
        messages.append(
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in answer.content]}
        )
        results = []
        for block in answer.content:
            if block.type == "tool_use":
                command = block.input["command"]  # type: ignore[index]
                runs += "pytest" in command
                output = (
                    (FAILING if runs == 1 else PASSING)
                    if "pytest" in command
                    else run_tool(json.dumps(block.input), HOSTILE)
                )
                results.append({"type": "tool_result", "tool_use_id": block.id, "content": output})
        messages.append({"role": "user", "content": results})


def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("CW_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.mark.slow
def test_the_dashboard_shows_the_apis_figures_and_follows_new_requests(tmp_path: Path) -> None:
    db, folder = tmp_path / "s.db", shots(tmp_path)
    with (
        FakeLLMServer(RunsTestsUpstream()) as upstream,
        running_proxy(SQLiteStore(db), upstream.base_url, WeaverConfig(), budget=2500, auth_token=TOKEN) as (
            url,
            _,
        ),
        chromium_page(tmp_path / "profile") as page,
    ):
        base = url.removesuffix("/v1")
        headers = {"x-contextweaver-token": TOKEN, "x-api-key": KEY}
        client = anthropic.Anthropic(base_url=base, api_key=KEY, max_retries=0,
                                     default_headers={**headers, "x-contextweaver-session": "dash-1"})  # fmt: skip
        messages = claude.task(HOSTILE)
        agent_loop(client, messages, 8)
        store = SQLiteStore(db)
        wait_for(lambda: len(answered(store, "dash-1")) == 8)

        assert httpx.get(base + "/contextweaver/dashboard").status_code == 303  # to the sign-in
        page.go(f"{base}/contextweaver/dashboard?token={TOKEN}&key={KEY}")
        page.wait("document.body.dataset.ready === '1' && location.search === ''")  # the token left the URL
        api = httpx.get(base + "/contextweaver/sessions", headers=headers).json()
        shown = page.wait(f"document.querySelector('#live').textContent === 'live' && {FIGURES}")
        listed = money(api["cost"])
        assert json.loads(shown) == [str(api["cost"]["requests"]), *listed, str(api["cost"]["cuts"])]
        row = page.js(
            "[...document.querySelectorAll('tr[data-session=\"dash-1\"] td')].map(td => td.textContent)"
        )
        assert row[4:7] == money(api["sessions"][0]["cost"])
        page.screenshot(folder / "dashboard-sessions.png")

        page.go(f"{base}/contextweaver/dashboard/session/dash-1")
        page.wait("document.body.dataset.requests === '8'")
        detail = httpx.get(base + "/contextweaver/sessions/dash-1/requests", headers=headers).json()
        assert json.loads(page.js(FIGURES))[1:4] == money(detail["cost"])
        assert page.js("document.querySelectorAll('#timeline g.request').length") == 8
        cut_rows = [r for r in detail["requests"] if r["cut"]]
        assert cut_rows and page.js("document.querySelectorAll('#cuts details.cut').length") == len(cut_rows)
        note = page.js("document.querySelector('#cuts details.cut pre').textContent")
        assert note == cut_rows[-1]["cut"]["note"] and note.startswith("[ContextWeaver working state")
        assert page.js("document.querySelectorAll('img').length") == 0  # agent text never becomes markup
        dropped = page.js(
            "[...document.querySelectorAll('#cuts table.left tr')].map(tr => tr.textContent)"
            ".filter(t => t.includes('dropped'))"
        )
        sizes = {int(n["index"]): n["tokens"] for n in httpx.get(base + "/contextweaver/sessions/dash-1",
                                                                  headers=headers).json()["nodes"]}  # fmt: skip
        assert dropped and all(
            row.endswith(f"{sizes[int(row[1:].split('d')[0])]:,} tok left out") for row in dropped
        )
        nodes = httpx.get(base + "/contextweaver/sessions/dash-1", headers=headers).json()["nodes"]
        fixed = [(n["index"], label["index"]) for n in nodes for label in n.get("labels", [])]
        failed = [
            n["index"]
            for n in nodes
            if n.get("status") == "failed" and n["index"] not in dict(fixed).values()
        ]
        assert fixed and page.js("document.querySelector('#tests ul.fixed').textContent").startswith(
            f"N{fixed[0][0]} supersedes N{fixed[0][1]}: "
        )
        assert page.js("document.querySelectorAll('#tests ul.failing li').length") == len(failed)
        assert "test_x: PASSED" in page.js("document.querySelector('#tests pre.status').textContent")
        page.wait("document.querySelector('#graph').contentDocument.body.dataset.ready === '1'")
        page.screenshot(folder / "dashboard-session.png")

        agent_loop(client, messages, 1)  # one more request, no reload
        page.wait("document.body.dataset.requests === '9'")
        assert page.js("document.querySelectorAll('#timeline g.request').length") == 9
        after = httpx.get(base + "/contextweaver/sessions/dash-1/requests", headers=headers).json()
        assert page.wait(f"{FIGURES}.includes({json.dumps(money(after['cost'])[0])})")
        assert page.js("document.title") == "session dash-1"

        page.go(f"{base}/contextweaver/dashboard/graph/dash-1")
        page.wait("document.body.dataset.ready === '1'")
        assert page.js("document.querySelectorAll('g.row').length") == 1 + after["steps"]  # root and steps
        assert HOSTILE in page.js("document.querySelector('#panel').textContent")  # as text...
        assert (
            page.js("document.querySelectorAll('img').length") == 0 and page.js("document.title") != "PWNED"
        )
        page.screenshot(folder / "dashboard-graph.png")
