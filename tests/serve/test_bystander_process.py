"""A session is not pinned to one weaving process: its step is woven beside another session's huge output."""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.serve.harness import task
from tests.serve.processes import CLI, Proxy, serve_process, upstream_process
from tests.serve.test_access_process import step

TOKEN = "proxy-token-0123456789abcdef"
pytestmark = [
    pytest.mark.skipif(not CLI.exists(), reason="the contextweaver script is not installed"),
    pytest.mark.skipif(
        not Path("/proc/self/task").is_dir(), reason="reads weaving processes' CPU time in /proc"
    ),
]
MB = 1024 * 1024


def headers(session: str) -> dict[str, str]:
    return {"x-contextweaver-token": TOKEN, "authorization": "Bearer sk-caller",
            "content-type": "application/json", "x-contextweaver-session": session}  # fmt: skip


def pinned_together(name: str, workers: int = 2) -> str:
    """A session id the old routing (sha256 of the lock key, modulo the workers) put beside `name`'s."""

    def pool(session: str) -> int:
        return int(hashlib.sha256(f"id:{session}".encode()).hexdigest()[:8], 16) % workers

    return next(f"bystander-{n}" for n in range(100) if pool(f"bystander-{n}") == pool(name))


def huge_step(marker: str, size: int) -> list[dict[str, Any]]:
    call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "make"}'}}
    line = "src/module.py:12: building target with flags -O2 -Wall\n"
    return [*task(marker), {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": (line * (size // len(line)))}]  # fmt: skip


def worker_ticks(pid: int) -> dict[int, int]:
    """CPU time (clock ticks) each child of the proxy has used: its weaving processes."""
    ticks = {}
    children = [
        c for task in Path(f"/proc/{pid}/task").iterdir() for c in (task / "children").read_text().split()
    ]
    for child in children:  # the children of each of its threads
        with contextlib.suppress(OSError):  # a child that has just exited
            fields = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()
            ticks[int(child)] = int(fields[11]) + int(fields[12])  # utime + stime
    return ticks


def wait_for_a_busy_worker(pid: int, idle: dict[int, int], ticks: int = 25, timeout: float = 60) -> None:
    """Until one weaving process has used `ticks` more CPU than when idle: the huge step is being woven (its
    weave takes seconds), so the worker that wove the bystander's last step is busy."""
    deadline = time.monotonic() + timeout
    while not any(used - idle.get(child, 0) >= ticks for child, used in worker_ticks(pid).items()):
        assert time.monotonic() < deadline, "no weaving process started on the huge step"
        time.sleep(0.01)


def post(proxy: Proxy, messages: list[dict[str, Any]], session: str) -> httpx.Response:
    body = json.dumps({"model": "m", "messages": messages})
    return httpx.post(f"{proxy.url}/v1/chat/completions", content=body, headers=headers(session), timeout=120)


@pytest.mark.slow
def test_a_bystander_step_is_answered_while_another_session_weaves_a_huge_output(tmp_path: Path) -> None:
    with (
        upstream_process(tmp_path) as (port, _),
        serve_process(tmp_path, f"http://127.0.0.1:{port}/v1", "--budget", "20000", "--weaving-processes", "2",
                      token=TOKEN) as proxy,
    ):  # fmt: skip
        bystander = pinned_together("huge")
        messages = task("bystander")
        first = post(proxy, messages, bystander)  # woven by the first idle worker, where "huge" goes next
        assert first.status_code == 200, first.text
        messages = step(messages, first, "output 0 of the bystander\n" * 20)
        huge: dict[str, Any] = {}

        def weave_huge() -> None:
            huge["started"] = time.perf_counter()
            huge["answer"] = post(proxy, huge_step("huge", 10 * MB), "huge")

        thread = threading.Thread(target=weave_huge)
        thread.start()
        health = f"{proxy.url}/contextweaver/health"
        idle = worker_ticks(proxy.process.pid)
        while httpx.get(health, headers=headers("-"), timeout=10).json()["in_flight"]["requests"] < 1:
            time.sleep(0.01)
        wait_for_a_busy_worker(proxy.process.pid, idle)  # its body read, parsed and handed to a worker
        answer = post(proxy, messages, bystander)
        answered = time.perf_counter()
        thread.join()
        stored = httpx.get(
            f"{proxy.url}/contextweaver/sessions/{bystander}", headers=headers("-"), timeout=10
        )
    assert answer.status_code == 200 and huge["answer"].status_code == 200, (answer.text, huge["answer"].text)
    timing = huge["answer"].headers["server-timing"]
    weaving_ended = huge["started"] + float(timing.split("dur=")[1]) / 1000
    assert answered < weaving_ended, "the bystander's step waited for the huge output to be woven"
    assert stored.json()["steps"] == 1  # its step stored, by whichever worker wove it
