"""Real `contextweaver serve` replica processes on one store, in front of one upstream process."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

CLI = Path(sys.executable).with_name("contextweaver")
UPSTREAM = Path(__file__).resolve().parents[1] / "serve" / "upstream_process.py"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_replica(store: str, upstream: str) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    process = subprocess.Popen(
        [str(CLI), "serve", "--upstream", upstream, "--store", store, "--port", str(port), "--log-level", "warning"],
        stderr=subprocess.PIPE, text=True, env=dict(os.environ), start_new_session=True,
    )  # fmt: skip
    return process, f"http://127.0.0.1:{port}"


def wait_healthy(process: subprocess.Popen[str], url: str) -> None:
    deadline = time.monotonic() + 90
    while True:
        try:
            if httpx.get(f"{url}/contextweaver/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"a replica did not start: {process.stderr.read() if process.stderr else ''}")
        time.sleep(0.1)


@contextmanager
def replicas(store: str, count: int, log: Path) -> Iterator[tuple[list[str], list[subprocess.Popen[str]]]]:
    """`count` proxies on `store` (their /v1 URLs and processes), started together, stopped at the end."""
    upstream = subprocess.Popen([sys.executable, str(UPSTREAM), str(log)], stdout=subprocess.PIPE, text=True)
    assert upstream.stdout is not None
    upstream_url = f"http://127.0.0.1:{int(upstream.stdout.readline())}/v1"
    started = [start_replica(store, upstream_url) for _ in range(count)]
    try:
        for process, url in started:
            wait_healthy(process, url)
        yield [f"{url}/v1" for _, url in started], [process for process, _ in started]
    finally:
        for process, _ in started:
            kill(process, signal.SIGTERM)
        upstream.terminate()
        upstream.wait(30)


def kill(replica: subprocess.Popen[str], how: signal.Signals = signal.SIGKILL) -> None:
    """Signal a replica with its weaving worker processes (its process group), and reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(replica.pid, how)
    try:
        replica.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(replica.pid, signal.SIGKILL)
        replica.wait(30)


def history(marker: str, steps: int) -> list[dict[str, Any]]:
    """A conversation of `steps` finished tool-calling steps whose every message carries `marker`."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": f"Fix the bug. Marker {marker}"},
    ]
    for k in range(1, steps + 1):
        call = {"id": f"call_{k}", "type": "function",
                "function": {"name": "bash", "arguments": json.dumps({"command": f"cat f{k}.py  # {marker}"})}}  # fmt: skip
        messages += [
            {"role": "assistant", "content": f"step {k} of {marker}", "tool_calls": [call]},
            {
                "role": "tool",
                "tool_call_id": f"call_{k}",
                "content": f"f{k}.py line 1: {marker}\nline 2: {k}",
            },
        ]
    return messages
