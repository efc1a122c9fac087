"""Time to the first row and in total of `contextweaver replay` on a long run (not a test).

Writes a synthetic run of `--steps` steps (the steps of `core_benchmark.py`) in the project's JSON
Lines format to a temporary file, runs `contextweaver replay` on it as a subprocess (stdout a pipe,
so no progress line), and reports the seconds to the first table row on stdout and in total, wall
and CPU (the process's user + system time: on a shared machine wall time measures the others too),
and the process's peak RSS.

    python benchmarks/replay_first_row.py                     # 2,000 steps, the default strategies
    python benchmarks/replay_first_row.py --steps 500 --args "--budget 8000"
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from core_benchmark import synthetic_step

ROW = re.compile(r"^\s*1\s")
"""The first step's row of the table (its step number first); with --json, the first line."""


def write_run(path: Path, steps: int) -> None:
    rng = random.Random(7)
    with path.open("w", encoding="utf-8") as handle:
        handle.write(
            json.dumps({"system": "You are a coding agent.", "task": "Fix the helper calls."}) + "\n"
        )
        for i in range(1, steps + 1):
            step = synthetic_step(rng, i)
            line = {"thought": step.thought, "action": step.action, "observation": step.observation}
            handle.write(json.dumps(line) + "\n")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a running process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(path: Path, extra: list[str]) -> dict[str, float]:
    """Seconds to the first row and in total (wall and CPU), and the lines printed, of one replay."""
    entry = "import sys; from contextweaver.cli import main; sys.argv[0] = 'contextweaver'; main()"
    command = [sys.executable, "-c", entry, "replay", str(path), *extra]
    json_rows = "--json" in extra
    found: dict[str, float] = {"lines": 0}
    start = time.perf_counter()
    env = {**os.environ, "COLUMNS": "100"}
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            found["lines"] += 1
            if "first" not in found and (json_rows or ROW.match(line)):
                found["first"] = time.perf_counter() - start
                found["first_cpu"] = cpu_seconds(proc.pid)
    found["total"] = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    found["total_cpu"] = usage.ru_utime + usage.ru_stime
    if proc.returncode != 0:
        sys.exit(f"replay exited {proc.returncode}: {shlex.join(command)}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--args", default="", help="extra replay arguments, e.g. '--budget 8000 -s cw,full'")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"synthetic-{args.steps}.jsonl"
        write_run(path, args.steps)
        size = path.stat().st_size / 1e6
        found = measure(path, shlex.split(args.args))
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
    first = (
        f"first row {found['first']:.2f}s ({found['first_cpu']:.2f}s CPU)" if "first" in found else "no row"
    )
    print(
        f"{args.steps} steps ({size:.1f} MB): {first}, total {found['total']:.1f}s ({found['total_cpu']:.1f}s CPU), "
        f"{found['lines']:.0f} lines, peak RSS {peak:.0f} MB"
    )


if __name__ == "__main__":
    main()
