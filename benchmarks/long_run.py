"""Long runs (not a test): per-step time and peak RSS at 100 / 1,000 / 10,000 steps.

    python benchmarks/long_run.py                       # every section at 100,1000,10000 steps
    python benchmarks/long_run.py --lengths 100,1000 --sections add_step,replay
    python benchmarks/long_run.py --sections replay --strategies full,masking   # some strategies only

Sections, each measured in a fresh process (so its peak RSS is its own), on the synthetic trace of
`core_benchmark.py`:
- add_step:  ContextWeaver.add_step, mean of the last 100 steps (the cost of a step at depth N).
- context:   ContextWeaver.context(), unbounded and at 8,000 tokens, mean over the last 100 steps.
- replay:    a whole run replayed through the default replay strategies in lockstep, summed up as
             `contextweaver replay` does (`eval/lockstep.py`: next-step evidence recall, tokens, prompt-
             cache cost); per-step time over the last 100 steps and the first 100, and per strategy
             [recall, mean tokens, cached share].
- proxy:     one request to a real `contextweaver serve` (fake upstream) that adds one step to a
             session of N steps, mean over 10 requests; the first request, carrying N-10 steps, is
             reported apart (cold ingest), with the same body sent to the upstream directly and a plain
             json.loads + json.dumps of it. RSS is the proxy's.
- reopen:    `Session.open` of a stored session of N steps (SQLite file), per step and in total.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from core_benchmark import synthetic_step

from contextweaver.records import Step
from contextweaver.strategies import REPLAY_DEFAULT

ROOT = [{"role": "system", "content": "agent"}, {"role": "user", "content": "fix helper calls"}]
LAST = 100
PROXY_STEPS = 10
JSON = {"content-type": "application/json"}


def steps(n: int) -> list[Step]:
    rng = random.Random(7)
    return [synthetic_step(rng, i) for i in range(1, n + 1)]


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def ms(values: list[float]) -> float:
    return round(sum(values) / len(values) * 1000, 3)


def add_step(n: int, _: dict[str, Any]) -> dict[str, Any]:
    from contextweaver import ContextWeaver

    weaver = ContextWeaver()
    weaver.begin(ROOT)
    times = []
    started = time.perf_counter()
    for step in steps(n):
        start = time.perf_counter()
        weaver.add_step(step)
        times.append(time.perf_counter() - start)
    return {"ms_per_step": ms(times[-LAST:]), "total_s": round(time.perf_counter() - started, 2)}


def context(n: int, _: dict[str, Any]) -> dict[str, Any]:
    from contextweaver import ContextWeaver

    weaver = ContextWeaver()
    weaver.begin(ROOT)
    unbounded, budgeted = [], []
    for i, step in enumerate(steps(n), start=1):
        weaver.add_step(step)
        if i > n - LAST:
            start = time.perf_counter()
            weaver.context()
            middle = time.perf_counter()
            weaver.context(8000)
            unbounded.append(middle - start)
            budgeted.append(time.perf_counter() - middle)
    return {"ms_per_step": ms(unbounded), "ms_at_8000": ms(budgeted)}


def replay(n: int, options: dict[str, Any]) -> dict[str, Any]:
    from contextweaver import build_strategy
    from contextweaver.eval.lockstep import Lockstep
    from contextweaver.formats.base import Trajectory

    trajectory = Trajectory(list(ROOT), steps(n))
    started = time.perf_counter()
    lockstep = Lockstep(trajectory, options["strategies"], lambda name: build_strategy(name).strategy)
    times = []
    start = time.perf_counter()
    for _ in lockstep:
        now = time.perf_counter()
        times.append(now - start)
        start = now
    out: dict[str, Any] = {
        "ms_per_step": ms(times[-LAST:]),
        "ms_first_100": ms(times[:LAST]),
        "total_s": round(time.perf_counter() - started, 2),
    }
    for name, total in lockstep.totals.items():
        cost = total.meter.cost()
        recall = round(total.hits / total.items, 4) if total.items else None
        out[name] = [recall, round(total.tokens / total.steps), round(cost.cache_share, 3)]
    return out


def proxy(n: int, _: dict[str, Any]) -> dict[str, Any]:
    import httpx
    from proxy_load import UPSTREAM, free_port, wait_healthy

    workdir = Path(tempfile.mkdtemp(prefix="cw-long-"))
    upstream = subprocess.Popen([sys.executable, "-c", UPSTREAM], stdout=subprocess.PIPE)
    assert upstream.stdout is not None
    upstream_url = f"http://127.0.0.1:{int(upstream.stdout.readline())}/v1"
    port = free_port()
    cli = Path(sys.executable).with_name("contextweaver")
    server = subprocess.Popen([str(cli), "serve", "--upstream", upstream_url, "--store", str(workdir / "s.db"),
                               "--port", str(port), "--log-level", "warning"])  # fmt: skip
    messages = [dict(m) for m in ROOT]
    messages[1]["content"] += " session-long"
    for i, step in enumerate(steps(n), start=1):
        call = {"id": f"call_{i}", "type": "function",
                "function": {"name": "bash", "arguments": json.dumps({"command": step.action})}}  # fmt: skip
        messages += [{"role": "assistant", "content": step.thought, "tool_calls": [call]},
                     {"role": "tool", "tool_call_id": f"call_{i}", "content": step.observation}]  # fmt: skip
    try:
        wait_healthy(f"http://127.0.0.1:{port}/contextweaver/health", server)
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        times, direct, codec = [], [], []
        with httpx.Client(timeout=3600) as client:
            for k in range(n - PROXY_STEPS, n + 1):
                body = json.dumps({"model": "fake", "messages": messages[: len(ROOT) + 2 * k]}).encode()
                start = time.perf_counter()
                client.post(
                    url, content=body, headers={**JSON, "x-contextweaver-session": "long"}
                ).raise_for_status()
                times.append(time.perf_counter() - start)
                start = time.perf_counter()  # the same request sent to the upstream directly
                client.post(f"{upstream_url}/chat/completions", content=body, headers=JSON).raise_for_status()
                direct.append(time.perf_counter() - start)
                start = time.perf_counter()  # what parsing and writing the body costs at the least
                json.dumps(json.loads(body), ensure_ascii=False).encode()
                codec.append(time.perf_counter() - start)
        status = Path(f"/proc/{server.pid}/status").read_text()
        rss = int(next(line for line in status.splitlines() if line.startswith("VmHWM")).split()[1]) / 1024
    finally:
        server.terminate()
        server.wait(30)
        upstream.terminate()
    return {"ms_per_step": ms(times[1:]), "upstream_ms": ms(direct[1:]), "json_ms": ms(codec[1:]),
            "first_request_s": round(times[0], 2), "proxy_rss_mb": round(rss)}  # fmt: skip


def reopen(n: int, options: dict[str, Any]) -> dict[str, Any]:
    from contextweaver import Session, open_store

    location = options["store"]
    if options.get("setup"):
        session = Session.create(open_store(location), "long", ROOT)
        for step in steps(n):
            session.add_step(step)
        return {}
    start = time.perf_counter()
    Session.open(open_store(location), "long")
    seconds = time.perf_counter() - start
    return {"ms_per_step": round(seconds / n * 1000, 3), "total_s": round(seconds, 2)}


SECTIONS = {"add_step": add_step, "context": context, "replay": replay, "proxy": proxy, "reopen": reopen}


def child(section: str, n: int, options: dict[str, Any]) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", section, str(n), json.dumps(options)]
    done = subprocess.run(command, capture_output=True, text=True, check=False, env={**os.environ})
    if done.returncode:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lengths", default="100,1000,10000")
    parser.add_argument("--sections", default=",".join(SECTIONS))
    parser.add_argument("--strategies", default=",".join(REPLAY_DEFAULT), help="replay: comma-separated")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        section, n, options = args.child
        result = SECTIONS[section](int(n), json.loads(options))
        print(json.dumps({**result, "rss_mb": round(peak_mb())}))
        return
    print(f"{'section':<10}{'steps':>8}{'ms/step':>12}{'peak RSS MB':>13}  other")
    for section in args.sections.split(","):
        for n in (int(x) for x in args.lengths.split(",")):
            options: dict[str, Any] = {"strategies": args.strategies.split(",")}
            if section == "reopen":
                options["store"] = str(Path(tempfile.mkdtemp(prefix="cw-reopen-")) / "s.db")
                child(section, n, {**options, "setup": True})
            result = child(section, n, options)
            rss = result.pop("proxy_rss_mb", result.pop("rss_mb", "-"))
            per_step = result.pop("ms_per_step", "-")
            print(f"{section:<10}{n:>8}{per_step:>12}{rss:>13}  {json.dumps(result)}", flush=True)


if __name__ == "__main__":
    main()
