"""How `contextweaver replay` scales with the run (not a test): CPU and peak RSS at 2k..32k steps, and
on a run of 1 GB of output.

Writes synthetic runs in the project's JSON Lines format to a temporary folder, streaming to disk (a
realistic mix: file reads, greps, sed and heredoc edits, scripts, test runs with named failures), runs
`contextweaver replay` on each in a fresh subprocess (the default strategies at a budget of 8000 tokens,
the README's headline budget; stdout to /dev/null) and reports its CPU seconds (user + system, from
wait4: on a shared machine wall time measures the others too), the ratio per doubling of steps, and its
peak RSS. Without a budget a context is the whole history, so any per-step pass over the context makes
the replay quadratic by definition: `--budget none` measures that case.

    python benchmarks/replay_scaling.py                          # 2k, 4k, 8k, 16k, 32k steps
    python benchmarks/replay_scaling.py --steps 2000,4000 --gigabyte
    python benchmarks/replay_scaling.py --steps '' --gigabyte    # the 1 GB run only (4,403 steps)
    python benchmarks/replay_scaling.py --budget none            # unbounded contexts
    python benchmarks/replay_scaling.py --steps '' --gigabyte --output-mb 150 --args "-s cw-select"
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HEADER = {
    "system": "You are a coding agent. One bash command per reply.",
    "task": "Fix the helper calls in pkg.",
}
GIGABYTE_STEPS = 4403
"""The step count of the 1 GB run of issue 44."""


def step(rng: random.Random, i: int, pad: int) -> dict[str, str]:
    """One step of the mix; `pad` characters of log lines added to a read's or a test run's output."""
    path = f"pkg/module_{rng.randrange(60)}.py"
    kind = rng.random()
    if kind < 0.3:
        body = "\n".join(
            f"{n:>4}  def func_{n}(arg): return helper_{rng.randrange(400)}(arg)  # {i}" for n in range(1, 61)
        )
        out = {
            "thought": f"Where is helper_{rng.randrange(400)} used?",
            "action": f"nl -ba {path}",
            "observation": body,
        }
    elif kind < 0.45:
        hits = "\n".join(
            f"pkg/module_{rng.randrange(60)}.py:{rng.randrange(1, 61)}:helper_{i}" for _ in range(6)
        )
        out = {"thought": "Search.", "action": f"grep -rn helper_{i} pkg/", "observation": hits}
    elif kind < 0.62:
        out = {
            "thought": f"Patch {path}.",
            "action": f"sed -i 's/helper_{i}/helper_{i + 1}/' {path}",
            "observation": "",
        }
    elif kind < 0.7:
        action = f"cat > check_{i}.py <<'EOF'\nimport pkg\nprint(pkg.helper_{i}(1))\nEOF\npython check_{i}.py"
        out = {"thought": "Write a script.", "action": action, "observation": f"{rng.randrange(100)}"}
    elif kind < 0.78:
        out = {
            "thought": "Look at the diff.",
            "action": "git diff",
            "observation": f"diff --git a/{path} b/{path}\n-helper_{i}\n+helper_{i + 1}",
        }
    else:
        failing = [f"tests/test_helpers.py::test_case_{rng.randrange(40)}" for _ in range(rng.randrange(4))]
        lines = [
            f"FAILED {name} - AssertionError: assert {rng.randrange(9)} == {rng.randrange(9)}"
            for name in failing
        ]
        summary = (
            f"{len(failing)} failed, {80 - len(failing)} passed in 1.91s" if failing else "80 passed in 1.88s"
        )
        out = {
            "thought": "Run the tests.",
            "action": "python -m pytest -q tests/",
            "observation": "\n".join([*lines, summary]),
        }
    if pad and out["observation"]:
        log = f"DEBUG step {i} worker {rng.randrange(8)} processed batch {rng.randrange(10**6)} ok\n"
        out["observation"] = log * (pad // len(log)) + out["observation"]
    return out


def lines(steps: int, pad: int) -> Iterator[str]:
    rng = random.Random(44)
    yield json.dumps(HEADER)
    for i in range(1, steps + 1):
        yield json.dumps(step(rng, i, pad))


def write_run(path: Path, steps: int, pad: int = 0) -> int:
    """The run, written line by line (never whole in memory); returns its bytes."""
    with path.open("w", encoding="utf-8") as handle:
        for line in lines(steps, pad):
            handle.write(line + "\n")
    return path.stat().st_size


def measure(path: Path, extra: list[str]) -> dict[str, Any]:
    """CPU seconds, wall seconds and peak RSS (MB) of one `contextweaver replay` in a fresh process."""
    entry = "import sys; from contextweaver.cli import main; sys.argv[0] = 'contextweaver'; main()"
    command = [sys.executable, "-c", entry, "replay", str(path), *extra]
    start = time.perf_counter()
    with open(os.devnull, "w") as sink:
        proc = subprocess.Popen(command, stdout=sink, env={**os.environ, "COLUMNS": "100"})
        _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"replay failed with exit {proc.returncode}: {' '.join(command)}")
    return {
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
        "wall_s": round(time.perf_counter() - start, 1),
        "peak_mb": round(usage.ru_maxrss / 1024),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", default="2000,4000,8000,16000,32000", help="comma-separated step counts")
    parser.add_argument("--gigabyte", action="store_true", help="also the run of 1 GB of output")
    parser.add_argument(
        "--output-mb", type=int, default=1000, help="the output of `--gigabyte`'s run in MB (default: 1000)"
    )
    parser.add_argument("--budget", default="8000", help="replay's --budget, or 'none' (unbounded)")
    parser.add_argument("--args", default="", help="extra replay arguments, e.g. '-s cw,full'")
    args = parser.parse_args()
    extra = args.args.split() + ([] if args.budget == "none" else ["--budget", str(int(args.budget))])
    print(f"budget: {args.budget}", flush=True)
    print(f"{'run':>10} {'MB':>6} {'CPU s':>7} {'ratio':>6} {'wall s':>7} {'peak RSS MB':>12}", flush=True)
    with tempfile.TemporaryDirectory(prefix="cw-scaling-") as folder:
        previous = None
        for n in [int(s) for s in args.steps.split(",") if s]:
            path = Path(folder) / f"run-{n}.jsonl"
            size = write_run(path, n)
            got = measure(path, extra)
            ratio = f"{got['cpu_s'] / previous:.2f}" if previous else ""
            previous = got["cpu_s"]
            print(
                f"{n:>10} {size / 1e6:>6.0f} {got['cpu_s']:>7} {ratio:>6} {got['wall_s']:>7} {got['peak_mb']:>12}",
                flush=True,
            )
            path.unlink()
        if args.gigabyte:
            path = Path(folder) / "run-1gb.jsonl"
            pad = args.output_mb * 10**6 // GIGABYTE_STEPS * 100 // 83
            size = write_run(path, GIGABYTE_STEPS, pad=pad)
            got = measure(path, extra)
            print(
                f"{f'{GIGABYTE_STEPS}+pad':>10} {size / 1e6:>6.0f} {got['cpu_s']:>7} {'':>6} {got['wall_s']:>7} {got['peak_mb']:>12}",
                flush=True,
            )


if __name__ == "__main__":
    main()
