"""Bounded resources of a real `contextweaver serve`, measured on loopback; prints one row per probe.

    .venv/bin/python benchmarks/proxy_limits.py [--only WORD ...] [--proxy-src OTHER/src]

memory:     N requests of S MB at once (one tool output each, distinct sessions): the peak RSS of the
            proxy plus its weaving processes, sampled every 20 ms, and the statuses they got.
slow:       C connections that never finish their headers (the proxy started with a soft file limit of
            1,024), then one token holder's request: its status and latency, and the log's size.
bystander:  one session weaves an output of S MB while another session sends a small step: the
            bystander's latency.
Counts and times are bounded; everything listens on 127.0.0.1 only. Not a test.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rss import peak, rss_tree  # noqa: E402
from tests.serve.harness import task  # noqa: E402
from tests.serve.processes import SERVE_ENV, serve_process, upstream_process  # noqa: E402
from tests.serve.test_access_process import step  # noqa: E402
from tests.serve.test_bystander_process import pinned_together  # noqa: E402
from tests.serve.test_slow_clients_process import soft_file_limit, unfinished  # noqa: E402

TOKEN = "bench-proxy-token-0123456789"
MB = 1024 * 1024


def headers(session: str) -> dict[str, str]:
    return {"authorization": "Bearer sk-bench", "x-contextweaver-token": TOKEN,
            "content-type": "application/json", "x-contextweaver-session": session}  # fmt: skip


def big_body(marker: str, size: int) -> bytes:
    """A one-step conversation whose tool output is `size` bytes of log-like lines."""
    call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "make"}'}}
    line = "src/module.py:12: building target with flags -O2 -Wall\n"
    output = (line * (size // len(line) + 1))[:size]
    messages = [*task(marker), {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c1", "content": output}]  # fmt: skip
    return json.dumps({"model": "m", "messages": messages}).encode()


def memory(tmp: Path, port: int, count: int, size_mb: int, *args: str) -> str:
    with serve_process(tmp, f"http://127.0.0.1:{port}/v1", "--budget", "20000", *args, token=TOKEN) as proxy:
        bodies = [big_body(f"mem-{n}", size_mb * MB) for n in range(count)]
        statuses: Counter[int] = Counter()
        idle = rss_tree(proxy.process.pid)
        started = time.perf_counter()
        with peak(proxy.process.pid, rss_tree) as rss:

            def send(n: int) -> None:
                try:
                    answer = httpx.post(f"{proxy.url}/v1/chat/completions", content=bodies[n],
                                        headers=headers(f"mem-{n}"), timeout=300)  # fmt: skip
                    statuses[answer.status_code] += 1
                except httpx.HTTPError as exc:
                    statuses[type(exc).__name__] += 1  # type: ignore[index]

            threads = [threading.Thread(target=send, args=(n,)) for n in range(count)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        took = time.perf_counter() - started
    return (f"idle {idle / MB:.0f} MB, peak {rss['peak'] / MB:.0f} MB; statuses {dict(statuses)}; "
            f"{took:.1f} s")  # fmt: skip


def slow(tmp: Path, port: int, count: int, *args: str) -> str:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard < count + 400:
        return f"skipped: the hard file limit is {hard}"
    with ExitStack() as stack, soft_file_limit(hard):  # this process holds the client ends
        with soft_file_limit(1024):  # the proxy starts at the common default
            proxy = stack.enter_context(serve_process(tmp, f"http://127.0.0.1:{port}/v1", *args, token=TOKEN))
        opened = time.perf_counter()
        unfinished(int(proxy.url.rsplit(":", 1)[1]), count, stack)
        opened = time.perf_counter() - opened
        started = time.perf_counter()
        try:
            body = json.dumps({"model": "m", "messages": task("holder")}).encode()
            answer = httpx.post(f"{proxy.url}/v1/chat/completions", content=body, headers=headers("holder"),
                                timeout=30)  # fmt: skip
            result = f"{answer.status_code}"
        except httpx.HTTPError as exc:
            result = type(exc).__name__
        took = time.perf_counter() - started
        time.sleep(5.0)
        log = proxy.stderr.stat().st_size
    return f"{count} opened in {opened:.1f} s; token holder: {result} in {took:.2f} s; proxy log {log / 1024:.0f} KB"


def bystander(tmp: Path, port: int, size_mb: int, *args: str) -> str:
    """A session placed (by the old hash routing too) on the worker the huge output goes to, then 3 more of
    its steps sent while that output is woven."""
    with serve_process(tmp, f"http://127.0.0.1:{port}/v1", "--budget", "20000", *args, token=TOKEN) as proxy:
        url = f"{proxy.url}/v1/chat/completions"
        name = pinned_together("huge")
        messages = task("bystander")

        def send(session: str, body: bytes) -> httpx.Response:
            return httpx.post(url, content=body, headers=headers(session), timeout=300)

        answer = send(name, json.dumps({"model": "m", "messages": messages}).encode())
        messages = step(messages, answer, "output 0\n" * 20)
        body = big_body("huge", size_mb * MB)
        done: dict[str, float] = {}

        def huge() -> None:
            started = time.perf_counter()
            send("huge", body)
            done["huge"] = time.perf_counter() - started

        thread = threading.Thread(target=huge)
        thread.start()
        time.sleep(1.0)  # the huge output is being woven
        latencies = []
        for n in range(3):
            started = time.perf_counter()
            answer = send(name, json.dumps({"model": "m", "messages": messages}).encode())
            latencies.append(f"{answer.status_code} in {time.perf_counter() - started:.2f} s")
            messages = step(messages, answer, f"output {n + 1}\n" * 20)
        thread.join()
    return f"huge step {done.get('huge', 0):.1f} s; bystander steps: {', '.join(latencies)}"


PROBES: dict[str, Callable[[Path, int], str]] = {
    "memory: 1 request of 30 MB": lambda tmp, port: memory(tmp, port, 1, 30),
    "memory: 8 requests of 30 MB at once": lambda tmp, port: memory(tmp, port, 8, 30),
    "slow: 1,100 unfinished headers, soft limit 1,024": lambda tmp, port: slow(tmp, port, 1100),
    "bystander: beside a 20 MB output": lambda tmp, port: bystander(tmp, port, 20),
}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", nargs="*", help="run only probes whose name contains one of these words")
    parser.add_argument(
        "--proxy-src", help="run the proxy from this source tree (e.g. an older checkout's src)"
    )
    args = parser.parse_args()
    if args.proxy_src:
        SERVE_ENV["PYTHONPATH"] = args.proxy_src
    wanted = [w.lower() for w in args.only or []]
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory() as directory:
        tmp = Path(directory)
        with upstream_process(tmp) as (port, _):
            for name, probe in PROBES.items():
                if not wanted or any(w in name.lower() for w in wanted):
                    try:
                        result = probe(tmp, port)
                    except Exception as exc:  # a probe that breaks is a result too
                        result = f"probe error: {type(exc).__name__}: {str(exc)[:100]}"
                    rows.append((name, result))
                    print(f"{name} | {result}", flush=True)
    width = max(len(name) for name, _ in rows)
    print(f"\n{'probe'.ljust(width)} | result")
    for name, result in rows:
        print(f"{name.ljust(width)} | {result}")


if __name__ == "__main__":
    main()
