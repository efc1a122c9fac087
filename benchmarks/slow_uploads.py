"""Slow uploaders beside a normal caller on a real `contextweaver serve` (issue 44); one row per probe.

    PYTHONPATH=src:. .venv/bin/python benchmarks/slow_uploads.py [--only WORD ...] [--proxy-src OTHER/src]
        [-- EXTRA SERVE OPTIONS, e.g. --body-timeout 5]

slow-32mb:    2 connections declare 32 MB each and send a byte every 2 s (the issue's probe).
slow-small:   64 connections (--max-in-flight's default) declare 4 KB and send a byte every 2 s.
honest-30mb:  2 connections send 30 MB at 256 KB/s (under the default floor of 512 KB/s), 3 s ahead.
steady-30mb:  honest-30mb by clients that read the answer only once they have sent everything (httpx,
              requests): a broken pipe ("broken" below) when the proxy closes first.
stalled-32mb: 2 connections (two made-up keys) send all of 32 MB but its last 20 bytes at once, then a byte
              a second, 3 s ahead (issue 53: together they held all of --max-in-flight-mb for 74 s).
For each: the normal caller's status and latency (sent 1 s after the slow ones start, or 3 s), and the
slow ones' statuses and seconds to their answer (0 and "-": none within --give-up seconds). The proxy runs
with its defaults unless options follow `--`; --proxy-src runs another checkout's proxy (the old code).
Everything listens on 127.0.0.1 only. Not a test.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.serve.dripping import Dripping  # noqa: E402
from tests.serve.harness import task  # noqa: E402
from tests.serve.processes import SERVE_ENV, serve_process, upstream_process  # noqa: E402

TOKEN = "bench-proxy-token-0123456789"
MB = 1024 * 1024
PROBES = {  # name: (connections, declared bytes, bytes per send, seconds between sends, head start, first send)
    "slow-32mb": (2, 32 * MB, 1, 2.0, 1.0, 0),
    "slow-small": (64, 4096, 1, 2.0, 1.0, 0),
    "honest-30mb": (2, 30 * MB, 64 * 1024, 0.25, 3.0, 0),
    "stalled-32mb": (2, 32 * MB, 1, 1.0, 3.0, 32 * MB - 20),
    "steady-30mb": (2, 30 * MB, 64 * 1024, 0.25, 3.0, 0),
}


def probe(name: str, serve_args: list[str], give_up: float) -> str:
    connections, declared, step, every, head_start, burst = PROBES[name]
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        port, _ = stack.enter_context(upstream_process(Path(tmp)))
        proxy = stack.enter_context(
            serve_process(Path(tmp), f"http://127.0.0.1:{port}/v1", *serve_args, token=TOKEN)
        )
        proxy_port = int(proxy.url.rsplit(":", 1)[1])
        slow = [stack.enter_context(Dripping(proxy_port, declared=declared, every=every, step=step, token=TOKEN,
                                             credential=f"sk-slow-{n}", burst=burst, read_after=name.startswith("steady")))
                for n in range(connections)]  # fmt: skip
        time.sleep(head_start)
        started = time.monotonic()
        body = json.dumps({"model": "m", "messages": task("normal")})
        headers = {"x-contextweaver-token": TOKEN, "authorization": "Bearer sk-normal",
                   "content-type": "application/json"}  # fmt: skip
        normal = httpx.post(
            f"{proxy.url}/v1/chat/completions", content=body, headers=headers, timeout=give_up
        )
        latency = time.monotonic() - started
        deadline = time.monotonic() + give_up
        for one in slow:
            one.wait(max(0.0, deadline - time.monotonic()))
        statuses = Counter(one.status or ("broken" if one.broken else 0) for one in slow)
        answered = [one.elapsed for one in slow if one.status]
        shown = ", ".join(
            f"{status or 'none'} x{count}" for status, count in sorted(statuses.items(), key=str)
        )
        timing = f"{min(answered):.1f}-{max(answered):.1f}" if answered else "-"
        return f"| {name} | {normal.status_code} in {latency * 1000:.0f} ms | {shown} | {timing} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=list(PROBES))
    parser.add_argument(
        "--give-up", type=float, default=100.0, help="seconds to wait for the slow ones' answers"
    )
    parser.add_argument("--proxy-src", help="the src/ folder of another checkout whose proxy to run")
    parser.add_argument("serve_args", nargs="*", help="options for `contextweaver serve` (after --)")
    args = parser.parse_args()
    if args.proxy_src:
        SERVE_ENV["PYTHONPATH"] = args.proxy_src
    print("| probe | normal caller | slow callers' answers | slow answered after (s) |\n|---|---|---|---|")
    for name in args.only:
        print(probe(name, args.serve_args, args.give_up), flush=True)


if __name__ == "__main__":
    main()
