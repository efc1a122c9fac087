"""Sessions behind the proxy: named by header or derived, only new steps stored, resumed after a restart."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from contextweaver.records import PLACEHOLDER
from contextweaver.serve import read_conversation
from contextweaver.store import Session
from contextweaver.store.replay import signature
from contextweaver.store.sqlite import SQLiteStore
from contextweaver.testing.fake_server import FakeLLMServer
from contextweaver.weaver import ContextWeaver
from tests.serve.harness import PER_STEP, running_proxy, task, tool_call_reply
from tests.serve.test_proxy_openai import TOOLS, agent_loop


def reference_graph(messages: list[dict[str, Any]]) -> ContextWeaver:
    conversation = read_conversation(messages)
    weaver = ContextWeaver(PER_STEP)
    weaver.begin(conversation.root)
    for step in conversation.steps:
        weaver.add_step(step)
    return weaver


def client(url: str, session: str | None = None) -> openai.OpenAI:
    headers = {"x-contextweaver-session": session} if session else None
    return openai.OpenAI(base_url=url, api_key="k", max_retries=0, default_headers=headers)


def test_a_named_session_survives_a_proxy_restart(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    messages = task("run-A")
    with FakeLLMServer(tool_call_reply) as upstream:
        with running_proxy(SQLiteStore(path), upstream.base_url) as (url, _):
            agent_loop(client(url, "run-A"), messages, "run-A", 7)
        with running_proxy(SQLiteStore(path), upstream.base_url) as (
            url,
            manager,
        ):  # a new process, same file
            agent_loop(client(url, "run-A"), messages, "run-A", 5)
            stored = manager.store.steps("run-A")
    expected = read_conversation(messages[:-2])  # the last call's results were never sent
    assert [s.step for s in stored] == expected.steps and len(stored) == 11
    resumed = Session.open(SQLiteStore(path), "run-A")
    assert signature(resumed.graph) == signature(reference_graph(messages[:-2]).graph)
    assert upstream.requests[-1].body["messages"] == resumed.context().messages


def test_a_named_session_rejects_a_diverged_history(tmp_path: Path) -> None:
    with FakeLLMServer(tool_call_reply) as upstream, running_proxy(SQLiteStore(tmp_path / "s.db"), upstream.base_url) as (url, manager):  # fmt: skip
        messages = task("run-B")
        agent_loop(client(url, "run-B"), messages, "run-B", 4)
        edited = json.loads(json.dumps(messages))
        edited[3]["content"] = "an edited tool result"
        with pytest.raises(openai.ConflictError, match="departs from session 'run-B' at step 1"):
            client(url, "run-B").chat.completions.create(model="m", messages=edited, tools=TOOLS)  # type: ignore[arg-type]
        with pytest.raises(openai.ConflictError, match="another system prompt or task"):
            client(url, "run-B").chat.completions.create(model="m", messages=task("other"))  # type: ignore[arg-type]
        agent_loop(client(url, "run-B"), messages, "run-B", 1)  # the real conversation goes on
        assert manager.store.step_count("run-B") == 4


def test_derived_sessions_fork_when_two_runs_of_one_task_diverge(tmp_path: Path) -> None:
    with FakeLLMServer(tool_call_reply) as upstream, running_proxy(SQLiteStore(tmp_path / "s.db"), upstream.base_url) as (url, manager):  # fmt: skip
        first = task("same-task")
        agent_loop(client(url), first, "same-task", 6)
        second = json.loads(json.dumps(first[:6]))  # a second run: the same first two steps...
        second[-1]["content"] = "a different output this time"  # ...then another observation
        client(url).chat.completions.create(model="m", messages=second, tools=TOOLS)  # type: ignore[arg-type]
        agent_loop(client(url), first, "same-task", 1)  # the first run goes on in its own session
        sessions = manager.store.sessions()
    assert len(sessions) == 2 and sessions[0].conversation_key == sessions[1].conversation_key
    assert [s.steps for s in sessions] == [6, 2]
    assert manager.store.steps(sessions[1].id)[-1].step.observation == "a different output this time"


def test_a_pending_tail_is_forwarded_but_not_stored(tmp_path: Path) -> None:
    call = {"id": "p1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
    messages = [*task("tail"), {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "p1", "content": "a.py"},
                {"role": "assistant", "content": "Let me think"}]  # fmt: skip
    with FakeLLMServer() as upstream, running_proxy(SQLiteStore(tmp_path / "s.db"), upstream.base_url) as (url, manager):  # fmt: skip
        answer = httpx.post(f"{url}/chat/completions", json={"model": "m", "messages": messages},
                            headers={"x-contextweaver-session": "tail"})  # fmt: skip
        assert answer.status_code == 200
        assert upstream.requests[-1].body["messages"][-1] == messages[-1]
        assert manager.store.step_count("tail") == 1


def test_mini_swe_agent_text_protocol(tmp_path: Path) -> None:
    messages: list[dict[str, Any]] = [*task("mini")]
    with FakeLLMServer() as upstream, running_proxy(SQLiteStore(tmp_path / "s.db"), upstream.base_url) as (url, manager):  # fmt: skip
        for i in range(9):
            messages.append(
                {
                    "role": "assistant",
                    "content": f"THOUGHT: look at part {i}\n\n```bash\ncat part_{i}.py\n```",
                }
            )
            output = "\n".join(f"part_{i} line {j}" for j in range(20))
            messages.append(
                {"role": "user", "content": f"<returncode>0</returncode>\n<output>\n{output}\n</output>"}
            )
            answer = httpx.post(f"{url}/chat/completions", json={"model": "m", "messages": messages})
            assert answer.status_code == 200
        session_id = answer.headers["x-contextweaver-session"]
        info = manager.store.session(session_id)
        assert info is not None and (info.format, info.steps) == ("mini-swe-agent", 9)
        assert [s.step.action for s in manager.store.steps(session_id)] == [
            f"cat part_{i}.py" for i in range(9)
        ]
        forwarded = upstream.requests[-1].body["messages"]
        assert any(PLACEHOLDER[:20] in str(m["content"]) for m in forwarded if m["role"] == "user")
        assert forwarded[-1] == messages[-1]


def test_concurrent_sessions_never_mix(tmp_path: Path) -> None:
    with FakeLLMServer(tool_call_reply) as upstream, running_proxy(SQLiteStore(tmp_path / "s.db"), upstream.base_url) as (url, manager):  # fmt: skip

        def run(n: int) -> list[dict[str, Any]]:
            messages = task(f"agent-{n:03d}")
            agent_loop(client(url, f"agent-{n:03d}"), messages, f"agent-{n:03d}", 8)
            return messages

        with ThreadPoolExecutor(6) as pool:
            histories = list(pool.map(run, range(6)))
        for request in upstream.requests:
            markers = {
                m for m in (f"agent-{n:03d}" for n in range(6)) if m in json.dumps(request.body["messages"])
            }
            assert len(markers) == 1
        for n, messages in enumerate(histories):
            stored = manager.store.steps(f"agent-{n:03d}")
            assert [s.step for s in stored] == read_conversation(messages[:-2]).steps
            assert all(f"agent-{n:03d}" in s.step.observation for s in stored)
