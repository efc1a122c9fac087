"""The lazy default against observation masking at a budget, per dataset, and on the runs with big steps.

Per strategy and budget: pooled next-step recall, history evidence, billed input (Anthropic prompt-cache
prices, over the full history billed without a cache) and its ratio to masking's, cuts per step; recall and
history evidence minus masking's on the same runs, with a bootstrap 95% interval over runs (a single
run moves them by up to 0.1, so a pooled difference of a few thousandths is often a tie). The
same rows again for the runs whose mean step is at least `--big` tokens (where the room holds only a
few steps, so cuts come often).

    python benchmarks/budget_vs_masking.py                        # validation splits and dev, 8k and 16k
    python benchmarks/budget_vs_masking.py --data lm32b -s cw,cw-select,masking --limit 10
    python benchmarks/budget_vs_masking.py -o recall=false    # ContextWeaver's settings changed (here: no handles)

`floor vs masking` is the least any strategy that shows the newest step could bill, against masking's bill:
each request's root read from the cache (the first request writes it) and its newest step (as much as the
room holds) written, nothing else sent. A goal below it is out of reach for every strategy. `reach` is next-step evidence in the context or one recall away (a step the context names, with the way
to recall it); `marks` the tokens the recall marks take per context that cut; `trail` the files changed so far
that the contexts of cuts name (the artifact trail); `repeats` the requests byte for byte an earlier one
(wholly served from the cache: an agent repeating one command). `loops apart` is the bill against masking's
over the steps where masking's request is not one of its repeats: a looping agent's identical outputs make
masking's contexts identical and wholly cached, while the default's note and recall marks name each step, so
its requests never repeat and the two bills part most on the loops.

Datasets and splits are those of `benchmarks/frontier.py`.
"""

from __future__ import annotations

import argparse
import math
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import data_absent
from frontier import datasets

from contextweaver.eval.intervals import pooled_difference
from contextweaver.eval.trajectory_run import evaluate, parse_budgets, trajectory_id
from contextweaver.nodes.extract import make_node, root_node
from contextweaver.prompt_cache import PRICES
from contextweaver.weaving.budget import Budget, BudgetError

METRICS = ("recall", "history")
COLUMNS = (
    "set | budget | strategy | recall | history | recall - masking [95%] | history - masking [95%] "
    "| billed | vs masking | floor vs masking | cuts/step | reach | marks | trail | repeats | loops apart"
)


def _one(job: tuple[Any, str, list[Any], list[str]]) -> dict[str, Any]:
    """One replay for all budgets, each step's record with its `floor`."""
    result = _replayed(job)
    trajectory = job[0]
    root = root_node(trajectory.root).full_tokens
    sizes = [make_node(i, s).full_tokens for i, s in enumerate(trajectory.steps, 1)]
    for budget, steps in result["budgets"].items():
        room = (
            max(0, Budget(int(budget)).messages - root) if budget.isdigit() else math.inf
        )  # none, half: the whole step
        for n, step in enumerate(steps):
            step["floor"] = floor(root, min(sizes[step["step"] - 1], room), first=n == 0)
    return result


def floor(root: int, newest: int, first: bool) -> float:
    """The least any strategy that shows the newest step bills for one request (Anthropic prices): the
    root read from the cache (written by the run's first request) and the newest step written, nothing
    else sent."""
    prices = PRICES["anthropic"]
    return prices.billed(root + newest, 0 if first else prices.cached(root))


def _replayed(job: tuple[Any, str, list[Any], list[str]]) -> dict[str, Any]:
    """One replay for all budgets; when a budget cannot hold the root, each budget alone (that one left out)."""
    trajectory, strategy, budgets, overrides = job
    try:
        return evaluate(trajectory, strategy, budgets, overrides=overrides)
    except BudgetError:
        result: dict[str, Any] = {"budgets": {}}
        for budget in budgets:
            try:
                one = evaluate(trajectory, strategy, [budget], overrides=overrides)
            except BudgetError:
                continue
            result = {**one, "budgets": {**result["budgets"], **one["budgets"]}}
        return {**result, "trajectory": trajectory_id(trajectory), "strategy": strategy}


def mean_step(trajectory: Any) -> float:
    steps = trajectory.steps
    return sum(make_node(i, s).full_tokens for i, s in enumerate(steps, 1)) / max(1, len(steps))


def pooled(steps: list[dict[str, Any]]) -> dict[str, float]:
    full = sum(s["full_tokens"] for s in steps) or 1
    return {
        "recall": sum(s["covered"] for s in steps) / max(1, sum(s["items"] for s in steps)),
        "history": sum(s["history_covered"] for s in steps) / max(1, sum(s["history_items"] for s in steps)),
        "reach": sum(s.get("reach_covered", s["covered"]) for s in steps)
        / max(1, sum(s["items"] for s in steps)),
        "marks": sum(s.get("marker_tokens", 0) for s in steps)
        / max(1, sum("marker_tokens" in s for s in steps)),
        "billed": sum(s["billed_anthropic"] for s in steps) / full,
        "floor": sum(s["floor"] for s in steps) / full,
        "cuts": sum(bool(s.get("compacted")) for s in steps) / max(1, len(steps)),
        "trail": sum(s.get("trail_covered", 0) for s in steps)
        / max(1, sum(s.get("trail_items", 0) for s in steps)),
        "repeats": sum(s["cached"] == s["tokens"] for s in steps),
    }


def per_run(steps: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """One run's (hits, items) of next-step evidence and of history evidence."""
    return {
        "recall": (sum(s["covered"] for s in steps), sum(s["items"] for s in steps)),
        "history": (sum(s["history_covered"] for s in steps), sum(s["history_items"] for s in steps)),
    }


def against_masking(ours: list[dict[str, Any]], masking: list[dict[str, Any]], metric: str) -> str:
    """The pooled difference to masking over the same runs, with its bootstrap 95% interval."""
    value, low, high = pooled_difference(
        [per_run(r)[metric] for r in ours], [per_run(r)[metric] for r in masking]
    )
    return f"{value:+.3f} [{low:+.3f}, {high:+.3f}]"


def loops_apart(ours: list[list[dict[str, Any]]], masking: list[list[dict[str, Any]]]) -> str:
    """The bill against masking's over the same runs' steps where masking's request is not wholly cached."""
    billed = [0.0, 0.0]
    for run, base in zip(ours, masking, strict=True):
        mine = {s["step"]: s["billed_anthropic"] for s in run}
        for step in base:
            if step["cached"] != step["tokens"] and step["step"] in mine:
                billed[0] += mine[step["step"]]
                billed[1] += step["billed_anthropic"]
    return f"{billed[0] / billed[1]:.2f}x" if billed[1] else "-"


def rows(
    name: str, results: list[dict[str, Any]], strategies: list[str], budgets: list[str], refusals: list[str]
) -> list[str]:
    """The table's rows of one set of runs; the runs a budget refuses (a root or a newest call it cannot
    hold: no step measured) are left out of them and named in `refusals`."""
    out = []
    for budget in budgets:
        held = {r["trajectory"] for r in results if r["budgets"].get(budget)}
        held -= {r["trajectory"] for r in results if not r["budgets"].get(budget)}  # every strategy or none
        if not held:
            out.append(f"| {name} | {budget} (every run refused) |" + " - |" * (COLUMNS.count("|") - 1))
            continue
        refused = sorted({r["trajectory"] for r in results} - held)
        if refused:
            refusals.append(f"{name} at {budget}: {len(refused)} run(s) refused: {', '.join(refused)}")
        runs = {
            s: [
                r["budgets"][budget]
                for r in sorted(results, key=lambda r: r["trajectory"])
                if r["strategy"] == s and r["trajectory"] in held
            ]
            for s in strategies
        }
        figures = {s: pooled([step for run in runs[s] for step in run]) for s in strategies}
        base = figures.get("masking")
        for strategy, f in figures.items():
            ratio = f"{f['billed'] / base['billed']:.2f}x" if base and base["billed"] else "-"
            least = f"{f['floor'] / base['billed']:.2f}x" if base and base["billed"] else "-"
            paired = strategy != "masking" and "masking" in runs
            deltas = [against_masking(runs[strategy], runs["masking"], m) if paired else "-" for m in METRICS]
            apart = loops_apart(runs[strategy], runs["masking"]) if "masking" in runs else "-"
            out.append(
                f"| {name} | {budget} ({len(held)} runs) | {strategy} | {f['recall']:.3f} | {f['history']:.3f} | "
                f"{' | '.join(deltas)} | {f['billed']:.3f} | {ratio} | {least} | {f['cuts']:.2f} | {f['reach']:.3f} | "
                f"{f['marks']:.0f} | {f['trail']:.3f} | {f['repeats']:.0f} | {apart} |"
            )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", default="dev,gemini,nebius,java,lm32b")
    parser.add_argument("--split", default="validation", choices=["train", "validation", "all"])
    parser.add_argument("-s", "--strategies", default="cw,masking")
    parser.add_argument("--budgets", default="8000,16000")
    parser.add_argument("--big", type=float, default=1000.0, help="mean step (tokens) of a big-step run")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument(
        "-o", "--override", action="append", default=[], help="a ContextWeaver setting, key=value"
    )
    args = parser.parse_args(argv)
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    budgets = parse_budgets(args.budgets)
    keys = ["none" if b is None else str(b) for b in budgets]
    print(f"| {COLUMNS} |")
    print("|" + "---|" * (COLUMNS.count("|") + 1))
    big: list[dict[str, Any]] = []
    absent: list[Path] = []
    refusals: list[str] = []
    for name, runs in datasets(args.data, args.split, args.limit, absent):
        large = {trajectory_id(r) for r in runs if mean_step(r) >= args.big}
        jobs = [(run, strategy, budgets, args.override) for run in runs for strategy in strategies]
        with ProcessPoolExecutor(args.jobs) as pool:
            results = list(pool.map(_one, jobs, chunksize=2))
        print("\n".join(rows(f"{name} ({len(runs)})", results, strategies, keys, refusals)), flush=True)
        big += [r for r in results if r["trajectory"] in large]
    if big:
        count = len({r["trajectory"] for r in big})
        print("\n".join(rows(f"mean step >= {args.big:,.0f} ({count})", big, strategies, keys, [])))
    for line in refusals:
        print(line)
    return data_absent.report(absent)


if __name__ == "__main__":
    sys.exit(main())
