"""`contextweaver serve` as a real process in front of a real upstream process, the openai client calling."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from contextweaver.store import Session
from contextweaver.store.sqlite import SQLiteStore
from tests.serve.harness import task
from tests.serve.processes import CLI, Proxy, serve_process, upstream_process
from tests.serve.test_proxy_openai import agent_loop, expected_upstream_messages

TOKEN = "proxy-token-0123456789abcdef"


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[tuple[Proxy, Path]]:
    if not CLI.exists():
        pytest.skip(f"the contextweaver script is not installed next to {CLI.parent}")
    with (
        upstream_process(tmp_path) as (port, log),
        serve_process(
            tmp_path,
            f"http://127.0.0.1:{port}/v1",
            "--log-level",
            "warning",
            "-c",
            "mode=per_step",
            token=TOKEN,
        ) as proxy,
    ):
        yield proxy, log


@pytest.mark.slow
def test_cli_proxy_between_two_processes(processes: tuple[Proxy, Path]) -> None:
    proxy, log = processes
    client = openai.OpenAI(base_url=proxy.url + "/v1", api_key="sk-process", max_retries=0,
                           default_headers={"x-contextweaver-token": TOKEN})  # fmt: skip
    messages = task("proc-7")
    sent = agent_loop(client, messages, "proc-7", 9)
    received = [json.loads(line)["messages"] for line in log.read_text().splitlines()]
    assert received == [expected_upstream_messages(history) for history in sent]
    pieces = [c.choices[0].delta.content or "" for c in client.chat.completions.create(
        model="m", messages=messages, stream=True)]  # type: ignore[arg-type]  # fmt: skip
    assert "".join(pieces) == "streamed answer from the upstream process"
    mine = {"authorization": "Bearer sk-process", "x-contextweaver-token": TOKEN}
    listed = httpx.get(proxy.url + "/contextweaver/sessions", headers=mine).json()["sessions"]
    assert [s["steps"] for s in listed] == [9]
    session = Session.open(SQLiteStore(proxy.store), listed[0]["id"])
    assert session.step_count == 9 and session.notes == []
    detail = httpx.get(proxy.url + "/contextweaver/sessions/" + listed[0]["id"], headers=mine).json()
    assert detail["prompt_cache"]["requests"] >= 8, "weaving processes report the prompt-cache use back"


def test_the_banner_names_both_base_urls_and_the_health_path(processes: tuple[Proxy, Path]) -> None:
    proxy, _ = processes
    banner = proxy.log()
    assert f"ANTHROPIC_BASE_URL={proxy.url} (no /v1)" in banner and f"base_url = {proxy.url}/v1" in banner
    assert f"health: {proxy.url}/contextweaver/health (or /health" in banner
    assert httpx.get(f"{proxy.url}/health", headers={"x-contextweaver-token": TOKEN}).json()["status"] == "ok"
