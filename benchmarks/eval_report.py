"""The evaluation report on the 35 dev mini-swe-agent trajectories: every strategy, five budgets, two seeds.

    .venv/bin/python benchmarks/eval_report.py [--out eval-out] [-j 2]

Reads ../shared/data in place (never copied). Results are cached per trajectory under <out>/results,
so a rerun only rebuilds the report. Extra arguments are passed to `contextweaver eval`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import data_absent

from contextweaver.cli import main

DEV = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "trajectories" / "mini-swe-agent"


def run(extra: list[str]) -> None:
    if not DEV.is_dir():
        sys.exit(data_absent.report([DEV]))
    args = ["eval", str(DEV.resolve()), "-s", "all", "-b", "4000,6000,8000,16000,none", "--seeds", "0,1"]
    if not any(a in ("--out", "-o") for a in extra):
        args += ["--out", "eval-out"]
    main.main(args=args + extra, prog_name="contextweaver")


if __name__ == "__main__":
    run(sys.argv[1:])
