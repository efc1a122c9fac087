"""A weaving process's memory while sessions with huge roots arrive one after another (issue 44).

    .venv/bin/python benchmarks/weaving_memory.py [--sessions 40] [--root-mb 25] [--steps 1]
        [--session-cache-mb N] [--rss-bound-mb 1024] [--proxy-src OTHER/src] [-- EXTRA SERVE ARGS]

Starts a real `contextweaver serve --weaving-processes 1` against the fake upstream process, then sends
each session's requests in turn (named sessions, no budget: the root passes through whole): the root
alone, then after each of `--steps` small tool calls. The weaving process's RSS (from /proc) is sampled
every 20 ms; one row per session, then the peak and whether it stayed under `--rss-bound-mb`: the
session cache (`--session-cache-mb`, by default the proxy's) plus the process itself and the request it
weaves, whose transient copies of a 25 MB root are several hundred MB. Not a test: it takes minutes.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rss import peak, rss  # noqa: E402
from tests.serve.processes import SERVE_ENV, serve_process, upstream_process  # noqa: E402

MB = 1024 * 1024
LINE = "src/pkg/module_{0}.py:{1}: requirement {1} of session {0}: build with flags -O2 -Wall\n"


def root(marker: str, size: int) -> list[dict[str, str]]:
    """A system prompt and a task of `size` bytes of distinct lines (nothing in it repeats across sessions)."""
    lines, total, n = [], 0, 0
    while total < size:
        line = LINE.format(marker, n)
        lines.append(line)
        total += len(line)
        n += 1
    task = "Fix the build. The requirements:\n" + "".join(lines)[:size]
    return [{"role": "system", "content": "You are a coding agent. Call bash once per turn."},
            {"role": "user", "content": task}]  # fmt: skip


def step(number: int) -> list[dict[str, object]]:
    call = {"id": f"call-{number}", "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": f"make target-{number}"})}}  # fmt: skip
    output = f"building target-{number}\n" * 200
    return [{"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call-{number}", "content": output}]  # fmt: skip


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    return found


def weaving_process(proxy_pid: int) -> int:
    """The proxy's weaving process: its child that is not the multiprocessing resource tracker."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for pid in children(proxy_pid):
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
            if b"resource_tracker" not in command:
                return pid
        time.sleep(0.1)
    raise RuntimeError("the proxy started no weaving process")


def session(client: httpx.Client, url: str, marker: str, root_bytes: int, steps: int) -> list[int]:
    messages: list[dict[str, object]] = [*root(marker, root_bytes)]
    statuses = []
    for number in range(steps + 1):
        if number:
            messages += step(number)
        body = json.dumps({"model": "m", "messages": messages}).encode()
        answer = client.post(f"{url}/v1/chat/completions", content=body,
                             headers={"content-type": "application/json", "x-contextweaver-session": marker})  # fmt: skip
        statuses.append(answer.status_code)
    return statuses


def run(tmp: Path, args: argparse.Namespace, extra: list[str]) -> int:
    """The peak RSS of the weaving process over all sessions."""
    with (
        upstream_process(tmp) as (port, _),
        serve_process(tmp, f"http://127.0.0.1:{port}/v1", *extra) as proxy,
    ):
        pid = weaving_process(proxy.process.pid)
        print(f"weaving process {pid}: idle {rss(pid) / MB:.0f} MB; serve {' '.join(extra)}", flush=True)
        highest, started = 0, time.perf_counter()
        with httpx.Client(timeout=600) as client:
            for n in range(args.sessions):
                with peak(pid) as found:
                    statuses = session(client, proxy.url, f"s{n}", int(args.root_mb * MB), args.steps)
                highest = max(highest, found["peak"])
                print(f"session {n + 1:3d}: statuses {statuses}; weaving RSS {rss(pid) / MB:6.0f} MB "
                      f"(peak {found['peak'] / MB:6.0f} MB); {time.perf_counter() - started:6.1f} s", flush=True)  # fmt: skip
        kept = [line for line in proxy.log().splitlines() if "not kept" in line]
        print(f"sessions too large for the cache (logged): {len(kept)}")
    return highest


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--root-mb", type=float, default=25.0)
    parser.add_argument("--steps", type=int, default=1, help="small steps after each session's root")
    parser.add_argument(
        "--session-cache-mb", type=int, default=0, help="passed to the proxy (0: its default)"
    )
    parser.add_argument(
        "--rss-bound-mb", type=int, default=1024, help="the stated bound the peak is checked against"
    )
    parser.add_argument("--proxy-src", help="run the proxy from another checkout's src (e.g. main's)")
    parser.add_argument("serve_args", nargs="*", help="extra `contextweaver serve` arguments (after --)")
    args = parser.parse_args()
    if args.proxy_src:
        SERVE_ENV["PYTHONPATH"] = str(Path(args.proxy_src).resolve())
    extra = ["--weaving-processes", "1", "--max-body-mb", str(args.root_mb + 8), *args.serve_args]
    if args.session_cache_mb:
        extra += ["--session-cache-mb", str(args.session_cache_mb)]
    with tempfile.TemporaryDirectory() as tmp:
        peak = run(Path(tmp), args, extra)
    verdict = "under" if peak <= args.rss_bound_mb * MB else "OVER"
    print(
        f"peak weaving-process RSS {peak / MB:.0f} MB: {verdict} the stated bound of {args.rss_bound_mb} MB"
    )


if __name__ == "__main__":
    main()
