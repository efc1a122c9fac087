"""Who reaches /metrics and the dashboard: the sessions API's rules, the sign-in (a form, or a printed link)
that puts the token in a cookie, the operator's view of every owner and an agent's view of its own."""

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
        sent = httpx.get(base + "/contextweaver/dashboard")
        assert sent.status_code == 303 and sent.headers["location"] == "/contextweaver/dashboard/sign-in"
        page = httpx.get(base + "/contextweaver/dashboard/sign-in")  # says how to get in, in the page
        assert page.status_code == 403 and page.headers["content-type"].startswith("text/html")
        assert "--auth-token-env" in page.text and "contextweaver sessions list --store FILE" in page.text
        refused = httpx.get(base + "/contextweaver/sessions")
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "token_required"
        assert "`contextweaver sessions list --store FILE`" in refused.json()["error"]["message"]
        assert httpx.get(base + "/contextweaver/passed").json()["error"]["code"] == "token_required"
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
        assert wrong.status_code == 303 and wrong.headers["location"] == "/contextweaver/dashboard/sign-in"
        post = browser.post("/v1/chat/completions", json={"model": "m", "messages": task("x")})
        assert post.status_code == 401  # cookies never authenticate a write


def test_the_sign_in_form_lets_the_operator_see_every_owner_and_an_agent_its_own(tmp_path: Path) -> None:
    with (
        FakeLLMServer(tool_call_reply) as upstream,
        running_proxy(SQLiteStore(tmp_path / "s.db"), upstream.base_url, auth_token=TOKEN) as (url, _),
    ):
        base = url.removesuffix("/v1")
        for key, session in (("sk-alice", "alice-1"), ("sk-bob", "bob-1")):
            client = openai.OpenAI(base_url=url, api_key=key, max_retries=0,
                                   default_headers={"x-contextweaver-token": TOKEN, "x-contextweaver-session": session})  # fmt: skip
            agent_loop(client, task(session), session, 2)
        form = httpx.get(base + "/contextweaver/dashboard/sign-in")
        assert (
            form.status_code == 200
            and 'name="token"' in form.text
            and "form-action 'self'" in form.headers["content-security-policy"]
        )
        post = {"content-type": "application/x-www-form-urlencoded"}
        wrong = httpx.post(base + "/contextweaver/dashboard/sign-in", content="token=guess", headers=post)
        assert wrong.status_code == 401 and "not this proxy's token" in wrong.text and not wrong.cookies

        signed = httpx.post(
            base + "/contextweaver/dashboard/sign-in", content=f"token={TOKEN}&key=", headers=post
        )
        assert signed.status_code == 303 and signed.headers["location"] == "/contextweaver/dashboard"
        assert all("HttpOnly" in c and "SameSite=strict" in c for c in signed.headers.get_list("set-cookie"))
        operator = httpx.Client(base_url=base, cookies=signed.cookies)
        page = operator.get("/contextweaver/dashboard")
        assert "alice-1" in page.text and "bob-1" in page.text and "Operator's view" in page.text
        listed = operator.get("/contextweaver/dashboard/api/sessions").json()
        owners = {s["id"]: s["owner"] for s in listed["sessions"]}
        assert listed["operator"] and len(set(owners.values())) == 2
        assert all(
            len(owner) == 8 and "sk-" not in owner for owner in owners.values()
        )  # a short hash, never the key
        assert operator.get("/contextweaver/dashboard/session/bob-1").status_code == 200
        requests = operator.get("/contextweaver/dashboard/api/session/bob-1/requests").json()["requests"]
        assert len(requests) == 2
        nodes = operator.get("/contextweaver/dashboard/api/session/bob-1").json()["nodes"]
        assert nodes and all(node["tokens"] > 0 for node in nodes)  # what a cut that drops it leaves out

        alice = httpx.post(base + "/contextweaver/dashboard/sign-in", content=f"token={TOKEN}&key=sk-alice",
                           headers=post)  # fmt: skip
        agent = httpx.Client(base_url=base, cookies=alice.cookies)
        mine = agent.get("/contextweaver/dashboard/api/sessions").json()
        assert not mine["operator"] and [s["id"] for s in mine["sessions"]] == ["alice-1"]
        assert agent.get("/contextweaver/dashboard/api/session/bob-1/requests").status_code == 404
        assert "Your sessions" in agent.get("/contextweaver/dashboard").text
