"""`contextweaver serve` as a real process in front of a real upstream process, the openai client calling."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from contextweaver.store import Session
from contextweaver.store.sqlite import SQLiteStore
from tests.serve.harness import task
from tests.serve.test_proxy_openai import agent_loop, expected_upstream_messages

CLI = Path(sys.executable).with_name("contextweaver")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    if not CLI.exists():
        pytest.skip(f"the contextweaver script is not installed next to {sys.executable}")
    log = tmp_path / "upstream.jsonl"
    upstream = subprocess.Popen([sys.executable, str(Path(__file__).with_name("upstream_process.py")), str(log)],
                                stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert upstream.stdout is not None
    upstream_port = int(upstream.stdout.readline())
    port, store = free_port(), tmp_path / "sessions.db"
    proxy = subprocess.Popen(
        [str(CLI), "serve", "--upstream", f"http://127.0.0.1:{upstream_port}/v1", "--store", str(store),
         "--port", str(port), "--log-level", "warning"],
        stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONHASHSEED": "0"},
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{url}/contextweaver/health", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if proxy.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the proxy did not start: {proxy.stderr.read() if proxy.stderr else ''}")
        time.sleep(0.1)
    try:
        yield f"{url}/v1", log, store
    finally:
        for process in (proxy, upstream):
            process.terminate()
            process.wait(20)


def test_cli_proxy_between_two_processes(processes: tuple[str, Path, Path]) -> None:
    url, log, store = processes
    client = openai.OpenAI(base_url=url, api_key="sk-process", max_retries=0)
    messages = task("proc-7")
    sent = agent_loop(client, messages, "proc-7", 9)
    received = [json.loads(line)["messages"] for line in log.read_text().splitlines()]
    assert received == [expected_upstream_messages(history) for history in sent]
    pieces = [c.choices[0].delta.content or "" for c in client.chat.completions.create(
        model="m", messages=messages, stream=True)]  # type: ignore[arg-type]  # fmt: skip
    assert "".join(pieces) == "streamed answer from the upstream process"
    listed = httpx.get(url.removesuffix("/v1") + "/contextweaver/sessions").json()["sessions"]
    assert [s["steps"] for s in listed] == [9]
    session = Session.open(SQLiteStore(store), listed[0]["id"])
    assert session.step_count == 9 and session.notes == []
