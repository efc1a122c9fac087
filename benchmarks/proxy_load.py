"""Load on the proxy: N concurrent sessions x M steps through `contextweaver serve` to a fake upstream.

    .venv/bin/python benchmarks/proxy_load.py [--sessions 20] [--steps 50] [--store PATH|DSN]

Three processes: the fake OpenAI-compatible upstream, the proxy (the real CLI), and this client
(asyncio + httpx, one task per session, each an agent loop: ask, run the tool call, append the
result). Checks that no step is lost and none lands in the wrong session (each answer must name
its own session's marker; the store must hold exactly each session's history), then reports the
proxy's added latency: its own pre-forward time (server-timing) and end-to-end latency against the
same load sent straight to the upstream. A benchmark, not a test: figures depend on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

UPSTREAM = """
import json, sys
from contextweaver.testing.fake_server import FakeLLMServer, Reply
def reply(request):
    messages = request.body["messages"]
    marker = messages[1]["content"].rsplit(" ", 1)[-1]
    call = {"id": f"call_{len(messages)}", "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": f"cat f{len(messages)}.py #{marker}"})}}
    return Reply(body={"id": "x", "object": "chat.completion", "created": 0, "model": "fake",
                       "choices": [{"index": 0, "finish_reason": "tool_calls",
                                    "message": {"role": "assistant", "content": "next", "tool_calls": [call]}}]})
server = FakeLLMServer(reply)
print(server.port, flush=True)
server._httpd.serve_forever()
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def agent(client: httpx.AsyncClient, url: str, n: int, steps: int, record: dict[str, Any]) -> None:
    marker = f"session-{n:03d}"
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": f"Fix the bug. Marker {marker}"},
    ]
    for _ in range(steps + 1):  # request k carries k-1 finished steps; the last one carries all of them
        started = time.perf_counter()
        answer = await client.post(
            f"{url}/chat/completions",
            json={"model": "fake", "messages": messages},
            headers={"x-contextweaver-session": marker},
        )
        record["latency"].append(time.perf_counter() - started)
        answer.raise_for_status()
        timing = answer.headers.get("server-timing", "")
        if "dur=" in timing:
            record["server"].append(float(timing.split("dur=")[1]) / 1000)
        message = answer.json()["choices"][0]["message"]
        call = message["tool_calls"][0]
        if not json.loads(call["function"]["arguments"])["command"].endswith(f"#{marker}"):
            record["wrong"].append((marker, call))
        messages.append(message)
        output = "\n".join(f"f{len(messages)}.py:{i}: value_{n}_{i} = {marker}" for i in range(25))
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": output})
    record["histories"][marker] = messages[:-2]


async def load(url: str, sessions: int, steps: int) -> dict[str, Any]:
    record: dict[str, Any] = {"latency": [], "server": [], "wrong": [], "histories": {}}
    limits = httpx.Limits(max_connections=sessions * 2)
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        started = time.perf_counter()
        await asyncio.gather(*(agent(client, url, n, steps, record) for n in range(sessions)))
        record["seconds"] = time.perf_counter() - started
    return record


def wait_healthy(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise SystemExit(f"not up: {url}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--store", help="store location (default: a new SQLite file in a temp dir)")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="cw-load-"))
    store = args.store or str(workdir / "sessions.db")
    upstream = subprocess.Popen([sys.executable, "-c", UPSTREAM], stdout=subprocess.PIPE)
    assert upstream.stdout is not None
    upstream_url = f"http://127.0.0.1:{int(upstream.stdout.readline())}/v1"
    port = free_port()
    cli = Path(sys.executable).with_name("contextweaver")
    proxy = subprocess.Popen([str(cli), "serve", "--upstream", upstream_url, "--store", store, "--port", str(port),
                              "--log-level", "warning"], env={**os.environ})  # fmt: skip
    try:
        wait_healthy(f"http://127.0.0.1:{port}/contextweaver/health", proxy)
        via = asyncio.run(load(f"http://127.0.0.1:{port}/v1", args.sessions, args.steps))
        direct = asyncio.run(load(upstream_url, args.sessions, args.steps))
    finally:
        proxy.terminate()
        proxy.wait(30)
        upstream.terminate()
    report = verify(store, via, args.sessions, args.steps)
    ms = 1000.0
    report.update(
        requests=len(via["latency"]),
        wall_seconds=round(via["seconds"], 2),
        proxy_own_ms_p50=round(percentile(via["server"], 0.5) * ms, 2),
        proxy_own_ms_p95=round(percentile(via["server"], 0.95) * ms, 2),
        end_to_end_ms_p50=round(percentile(via["latency"], 0.5) * ms, 2),
        end_to_end_ms_p95=round(percentile(via["latency"], 0.95) * ms, 2),
        direct_ms_p50=round(percentile(direct["latency"], 0.5) * ms, 2),
        direct_ms_p95=round(percentile(direct["latency"], 0.95) * ms, 2),
        added_ms_p50=round((percentile(via["latency"], 0.5) - percentile(direct["latency"], 0.5)) * ms, 2),
        added_ms_p95=round((percentile(via["latency"], 0.95) - percentile(direct["latency"], 0.95)) * ms, 2),
        mean_server_ms=round(statistics.fmean(via["server"]) * ms, 2),
    )
    print(json.dumps(report, indent=2))
    if not report["ok"]:
        raise SystemExit(1)


def verify(store_location: str, via: dict[str, Any], sessions: int, steps: int) -> dict[str, Any]:
    from contextweaver.serve import read_conversation
    from contextweaver.store import open_store

    store = open_store(store_location)
    lost, misplaced = 0, 0
    for marker, history in via["histories"].items():
        stored = store.steps(marker)
        expected = read_conversation(history).steps
        lost += max(0, len(expected) - len(stored))
        misplaced += sum(1 for s in stored if marker not in s.step.observation and s.step.observation)
        misplaced += sum(1 for a, b in zip(stored, expected, strict=False) if a.step != b)
    counts = sorted({s.steps for s in store.sessions()})
    ok = (
        not lost
        and not misplaced
        and not via["wrong"]
        and counts == [steps]
        and len(store.sessions()) == sessions
    )
    return {"ok": ok, "sessions": len(store.sessions()), "steps_per_session": counts, "lost_steps": lost,
            "misplaced_steps": misplaced, "wrong_answers": len(via["wrong"])}  # fmt: skip


if __name__ == "__main__":
    main()
