"""How often the default cuts at the budget a refusal suggests, per dataset: each run replayed at its own
suggested budget (`Budget.suggested`: its root plus room for `ROOM_STEPS` typical steps), with masking beside
it at the same budget.

Per dataset: steps replayed, cuts, steps per cut, the mean steps from one cut to the next in a run, cuts per
100 steps, the cached share of
each context's tokens on the steps between cuts (the prefix the previous request shares), pooled next-step
recall of both strategies and the default's bill as a multiple of masking's.

    python benchmarks/cut_rate.py                          # validation splits and dev
    python benchmarks/cut_rate.py --data lm32b --split train --limit 60

Datasets and splits are those of `benchmarks/frontier.py`.
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import data_absent
from frontier import datasets

from contextweaver.eval.trajectory_run import evaluate
from contextweaver.formats.base import Trajectory
from contextweaver.nodes.extract import root_node
from contextweaver.weaving.budget import Budget, Need, ahead_of


def suggested(trajectory: Trajectory) -> int:
    """The budget a refusal of this run's first request would suggest (no tool definitions in a replay)."""
    root = root_node(trajectory.root).full_tokens if trajectory.root else 0
    return Budget(0).suggested(ahead_of(Need(root)))


def _one(job: tuple[Trajectory, str]) -> dict[str, Any]:
    trajectory, strategy = job
    budget = suggested(trajectory)
    result = evaluate(trajectory, strategy, [budget])
    return {
        "run": result["trajectory"],
        "strategy": strategy,
        "steps": result["budgets"].get(str(budget), []),
    }


def _cut_steps(steps: list[dict[str, Any]]) -> list[int]:
    return [s["step"] for s in steps if s["compacted"]]


def _pairs(values: list[int]) -> list[tuple[int, int]]:
    return list(zip(values, values[1:], strict=False))


def row(name: str, results: list[dict[str, Any]]) -> str:
    ours = [s for r in results if r["strategy"] == "cw" for s in r["steps"]]
    masking = [s for r in results if r["strategy"] == "masking" for s in r["steps"]]
    cuts = sum(bool(s["compacted"]) for s in ours)
    between = [s["prefix_share"] for s in ours if not s["compacted"] and "prefix_share" in s]
    cached = sum(between) / len(between) if between else float("nan")
    runs = len({r["run"] for r in results})

    def recall(steps: list[dict[str, Any]]) -> float:
        return sum(s["covered"] for s in steps) / max(1, sum(s["items"] for s in steps))

    bill = sum(s["billed_anthropic"] for s in ours) / max(1.0, sum(s["billed_anthropic"] for s in masking))
    gap = f"{len(ours) / cuts:.1f}" if cuts else "no cut"
    gaps = [b - a for r in results if r["strategy"] == "cw" for a, b in _pairs(_cut_steps(r["steps"]))]
    apart = f"{sum(gaps) / len(gaps):.1f}" if gaps else "-"
    return (
        f"| {name} ({runs}) | {len(ours)} | {cuts} | {gap} | {apart} | {100 * cuts / max(1, len(ours)):.1f} | {cached:.3f} "
        f"| {recall(ours):.3f} | {recall(masking):.3f} | {bill:.2f}x |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", default="dev,gemini,nebius,java,lm32b")
    parser.add_argument("--split", default="validation", choices=["train", "validation", "all"])
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args(argv)
    print(
        "| set (runs) | steps | cuts | steps per cut | steps from cut to cut | cuts per 100 steps | cached share between cuts "
        "| recall cw | recall masking | cw billed vs masking |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    absent: list[Path] = []
    for name, runs in datasets(args.data, args.split, args.limit, absent):
        with ProcessPoolExecutor(args.jobs) as pool:
            results = list(pool.map(_one, [(r, s) for r in runs for s in ("cw", "masking")], chunksize=2))
        print(row(name, results), flush=True)
    return data_absent.report(absent)


if __name__ == "__main__":
    sys.exit(main())
