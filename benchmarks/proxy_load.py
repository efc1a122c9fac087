"""Load on the proxy: N concurrent sessions x M steps through 1-3 `contextweaver serve` replicas on one store.

    .venv/bin/python benchmarks/proxy_load.py [--sessions 200] [--steps 100] [--replicas 3] [--store DSN]

Processes: the fake OpenAI-compatible upstream, the replicas (the real CLI, all on one store: a SQLite
file by default, or a postgresql:// DSN), and this client (asyncio + httpx, one task per session, each
an agent loop: ask, run the tool call, append the result). Each session's requests go round-robin to
the replicas, so every replica sees every session and must catch up with what the others stored.
Checks that no step is lost and none lands in the wrong session (each answer must name its own
session's marker; the store must hold exactly each session's history), then reports the proxy's
added latency: its own pre-forward time (server-timing), and end-to-end latency against the same
load sent straight to the upstream, as a difference and a ratio. A benchmark, not a test: figures
depend on the machine (2 shared cores here: throughput is what the machine can do).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
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
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Server(ThreadingHTTPServer):
    request_queue_size = 1024  # hundreds of agents connect at once
    daemon_threads = True

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wbufsize = 1 << 16  # headers and body in one send: no Nagle stall against a delayed ACK

    def log_message(self, *args):
        pass

    def do_POST(self):
        try:
            messages = json.loads(self.rfile.read(int(self.headers["content-length"])))["messages"]
        except (ValueError, KeyError, TypeError):  # a body cut short by a peer that went away
            self.send_error(400, "unreadable body")
            return
        marker = messages[1]["content"].rsplit(" ", 1)[-1]
        call = {"id": f"call_{len(messages)}", "type": "function", "function": {
            "name": "bash", "arguments": json.dumps({"command": f"cat f{len(messages)}.py #{marker}"})}}
        data = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "fake",
                           "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                               "role": "assistant", "content": "next", "tool_calls": [call]}}]}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

server = Server(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def agent(client: httpx.AsyncClient, urls: list[str], marker: str, n: int, steps: int,
                record: dict[str, Any]) -> None:  # fmt: skip
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": f"Fix the bug. Marker {marker}"},
    ]
    for k in range(steps + 1):  # request k carries k finished steps; the last one carries all of them
        url = urls[(n + k) % len(urls)]
        started = time.perf_counter()
        for attempt in range(3):  # as agents' clients do: a kept-alive connection the server just closed
            try:
                answer = await client.post(f"{url}/chat/completions", json={"model": "fake", "messages": messages},
                                           headers={"x-contextweaver-session": marker})  # fmt: skip
                if answer.status_code not in (502, 503) or attempt == 2:  # retried as openai's client does
                    break
            except (httpx.ReadError, httpx.RemoteProtocolError, httpx.ConnectError):
                if attempt == 2:
                    raise
            record["retries"] += 1
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


async def load(urls: list[str], run: str, sessions: int, steps: int) -> dict[str, Any]:
    record: dict[str, Any] = {"latency": [], "server": [], "wrong": [], "histories": {}, "retries": 0}
    limits = httpx.Limits(max_connections=sessions * 2)
    async with httpx.AsyncClient(timeout=300, limits=limits) as client:
        started = time.perf_counter()
        await asyncio.gather(
            *(agent(client, urls, f"{run}-{n:03d}", n, steps, record) for n in range(sessions))
        )
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


def start_replicas(count: int, store: str, upstream_url: str) -> list[tuple[subprocess.Popen[bytes], str]]:
    cli = Path(sys.executable).with_name("contextweaver")
    started = []
    for _ in range(count):
        port = free_port()
        process = subprocess.Popen([str(cli), "serve", "--upstream", upstream_url, "--store", store, "--port",
                                    str(port), "--log-level", "warning"], env={**os.environ})  # fmt: skip
        started.append((process, f"http://127.0.0.1:{port}"))
    for process, url in started:
        wait_healthy(f"{url}/contextweaver/health", process)
    return started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--replicas", type=int, default=1, help="proxy processes sharing the store")
    parser.add_argument("--store", help="store location (default: a new SQLite file in a temp dir)")
    args = parser.parse_args()
    store = args.store or str(Path(tempfile.mkdtemp(prefix="cw-load-")) / "sessions.db")
    run = secrets.token_hex(3)  # session ids of this run: a store may hold earlier runs
    upstream = subprocess.Popen([sys.executable, "-c", UPSTREAM], stdout=subprocess.PIPE)
    assert upstream.stdout is not None
    upstream_url = f"http://127.0.0.1:{int(upstream.stdout.readline())}/v1"
    proxies = start_replicas(args.replicas, store, upstream_url)
    try:
        for number, (_, url) in enumerate(proxies):  # load the tokenizer and warm each replica up first
            asyncio.run(load([f"{url}/v1"], f"warmup-{run}-{number}", 1, 1))
        via = asyncio.run(load([f"{url}/v1" for _, url in proxies], run, args.sessions, args.steps))
        direct = asyncio.run(load([upstream_url], run, args.sessions, args.steps))
    finally:
        for process, _ in proxies:
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
        upstream.terminate()
    report = verify(store, via, run, args.sessions, args.steps)
    ms = 1000.0
    p50, p95 = (percentile(via["latency"], q) for q in (0.5, 0.95))
    d50, d95 = (percentile(direct["latency"], q) for q in (0.5, 0.95))
    report.update(
        replicas=args.replicas,
        store=store.split("?")[0],
        requests=len(via["latency"]),
        retried_requests=via["retries"],
        wall_seconds=round(via["seconds"], 1),
        requests_per_second=round(len(via["latency"]) / via["seconds"], 1),
        direct_requests_per_second=round(len(direct["latency"]) / direct["seconds"], 1),
        proxy_own_ms_p50=round(percentile(via["server"], 0.5) * ms, 2),
        proxy_own_ms_p95=round(percentile(via["server"], 0.95) * ms, 2),
        end_to_end_ms_p50=round(p50 * ms, 2),
        end_to_end_ms_p95=round(p95 * ms, 2),
        direct_ms_p50=round(d50 * ms, 2),
        direct_ms_p95=round(d95 * ms, 2),
        added_ms_p50=round((p50 - d50) * ms, 2),
        added_ms_p95=round((p95 - d95) * ms, 2),
        ratio_p50=round(p50 / d50, 2),
        ratio_p95=round(p95 / d95, 2),
        mean_server_ms=round(statistics.fmean(via["server"]) * ms, 2),
    )
    print(json.dumps(report, indent=2))
    if not report["ok"]:
        raise SystemExit(1)


def verify(store_location: str, via: dict[str, Any], run: str, sessions: int, steps: int) -> dict[str, Any]:
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
        misplaced += max(0, len(stored) - len(expected))
    mine = [s for s in store.sessions() if s.id.startswith(f"{run}-")]
    counts = sorted({s.steps for s in mine})
    store.close()
    ok = not lost and not misplaced and not via["wrong"] and counts == [steps] and len(mine) == sessions
    return {"ok": ok, "sessions": len(mine), "steps_per_session": counts, "lost_steps": lost,
            "misplaced_steps": misplaced, "wrong_answers": len(via["wrong"])}  # fmt: skip


if __name__ == "__main__":
    main()
