"""Time to the first row and in total of `contextweaver replay` on a long run (not a test).

Writes a synthetic run of `--steps` steps (the steps of `core_benchmark.py`) in the project's JSON
Lines format to a temporary file, runs `contextweaver replay` on it as a subprocess (stdout a pipe,
so no progress line), and reports the seconds to the first table row on stdout, to the last, and
the process's peak RSS.

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


def measure(path: Path, extra: list[str]) -> tuple[float | None, float, int]:
    """(seconds to the first row, seconds in total, lines printed) of one replay."""
    entry = "import sys; from contextweaver.cli import main; sys.argv[0] = 'contextweaver'; main()"
    command = [sys.executable, "-c", entry, "replay", str(path), *extra]
    json_rows = "--json" in extra
    start = time.perf_counter()
    first = None
    lines = 0
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, text=True, env={**os.environ, "COLUMNS": "100"}
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines += 1
            if first is None and (json_rows or ROW.match(line)):
                first = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"replay exited {proc.returncode}: {shlex.join(command)}")
    return first, time.perf_counter() - start, lines


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
        first, total, lines = measure(path, shlex.split(args.args))
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
    shown = f"{first:.2f}s" if first is not None else "no row"
    print(
        f"{args.steps} steps ({size:.1f} MB): first row {shown}, total {total:.1f}s, {lines} lines, peak RSS {peak:.0f} MB"
    )


if __name__ == "__main__":
    main()
