"""Who reaches /metrics and the dashboard: the sessions API's rules, and the login that moves the token
from the address bar into a cookie."""

from __future__ import annotations

from pathlib import Path

import httpx
import openai

from contextweaver.store.sqlite import SQLiteStore
from contextweaver.testing.fake_server import FakeLLMServer
from tests.serve.harness import running_proxy, task, tool_call_reply
from tests.serve.test_proxy_openai import agent_loop

TOKEN = "dashboard-access-token-0123456789"


def test_without_a_token_metrics_answer_on_loopback_and_the_dashboard_does_not(tmp_path: Path) -> None:
    with FakeLLMServer(tool_call_reply) as upstream, running_proxy(SQLiteStore(tmp_path / "s.db"), upstream.base_url) as (url, _):  # fmt: skip
        base = url.removesuffix("/v1")
        assert httpx.get(base + "/metrics").status_code == 200
        refused = httpx.get(base + "/contextweaver/dashboard")
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "token_required"
        assert httpx.get(base + "/metrics", headers={"host": "evil.example"}).status_code == 403  # rebinding


def test_the_login_sets_strict_cookies_and_each_credential_sees_its_own_sessions(tmp_path: Path) -> None:
    with (
        FakeLLMServer(tool_call_reply) as upstream,
        running_proxy(SQLiteStore(tmp_path / "s.db"), upstream.base_url, auth_token=TOKEN) as (url, _),
    ):
        base = url.removesuffix("/v1")
        assert httpx.get(base + "/metrics").status_code == 401
        assert httpx.get(base + "/metrics", headers={"authorization": f"Bearer {TOKEN}"}).status_code == 200
        for key, session in (("sk-alice", "alice-1"), ("sk-bob", "bob-1")):
            client = openai.OpenAI(base_url=url, api_key=key, max_retries=0,
                                   default_headers={"x-contextweaver-token": TOKEN, "x-contextweaver-session": session})  # fmt: skip
            agent_loop(client, task(session), session, 2)

        login = httpx.get(base + f"/contextweaver/dashboard?token={TOKEN}&key=sk-alice&x=1")
        assert login.status_code == 303 and login.headers["location"] == "/contextweaver/dashboard?x=1"
        cookies = login.headers.get_list("set-cookie")
        assert all("HttpOnly" in c and "SameSite=strict" in c and "Path=/contextweaver" in c for c in cookies)
        browser = httpx.Client(base_url=base, cookies=login.cookies)
        page = browser.get("/contextweaver/dashboard")
        assert page.status_code == 200 and "alice-1" in page.text and "bob-1" not in page.text
        assert "script-src 'self'" in page.headers["content-security-policy"]
        assert browser.get("/contextweaver/sessions").json()["total"] == 1  # the dashboard's polls, as alice
        assert browser.get("/contextweaver/dashboard/session/alice-1").status_code == 200
        assert browser.get("/contextweaver/dashboard/session/bob-1").status_code == 404
        assert browser.get("/contextweaver/dashboard/graph/bob-1").status_code == 404
        assert browser.get("/contextweaver/dashboard/assets/dashboard.js").status_code == 200
        assert browser.get("/contextweaver/dashboard/assets/..%2Fdashboard.py").status_code == 404
        wrong = httpx.get(base + "/contextweaver/dashboard", cookies={"cw_token": "not-the-token-at-all"})
        assert wrong.status_code == 401
        post = browser.post("/v1/chat/completions", json={"model": "m", "messages": task("x")})
        assert post.status_code == 401  # cookies never authenticate a write
