"""Evidence delivered by query (metric 9): recall by plain words after a cut, against grep over the
transcript, the newest N tokens, and BM25 over messages (contextweaver.eval.query_recall).

The cuts are the default strategy `cw` at 8,000 tokens; answers within 1,000 / 2,000 / 4,000 o200k tokens.
Per dataset, method and budget: the pooled share of items delivered and the share of asked steps with at
least one, each with a bootstrap 95% interval over runs; then, at each budget, `query` against each
baseline on the same runs (ratio to grep, difference to bm25 and newest, with intervals).

    nice python benchmarks/query_recall.py                          # dev runs + every validation split
    nice python benchmarks/query_recall.py --split train --tune     # the weights' grid, on train only
    nice python benchmarks/query_recall.py --data dev --limit 5

Datasets and splits are those of `benchmarks/frontier.py`.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import data_absent
from frontier import UNSPLIT, datasets

from contextweaver.eval.intervals import bootstrap, pooled_difference
from contextweaver.eval.query_recall import BASELINES, BUDGETS, query_recall
from contextweaver.nodes.recall_query import Weights

GRID = {
    f"r{r}-h{h}-p{p}-a{a}{'' if o else '-outputs'}": Weights(
        recency=r, half_life=h, parents=p, around=a, excerpt_share=0.5, actions=o
    )
    for r, h, p, a, o in itertools.product((0.6, 1.0), (2.0, 5.0), (0.0, 0.3), (0, 2), (True, False))
}
"""The settings --tune tries (earlier grids: excerpt shares 0.25 and 0.5, recency 0 to 2 falling linearly
over the candidates or halving every 2, 5 or 15 steps, all with the actions shown)."""


def _one(job: tuple[Any, dict[str, Weights]]) -> list[dict[str, Any]]:
    trajectory, settings = job
    try:
        return query_recall(trajectory, settings)
    except Exception as exc:  # a run the replay refuses (a root over the cut budget): reported, left out
        print(f"skipped a run: {type(exc).__name__}: {exc}", file=sys.stderr)
        return []


def per_run(run: list[dict[str, Any]], column: str) -> tuple[int, int]:
    return sum(s[column] for s in run), sum(s["items"] for s in run)


def pooled(runs: list[list[dict[str, Any]]], column: str, pick: Any = None) -> float:
    chosen = [runs[i] for i in pick] if pick is not None else runs
    hits = sum(per_run(r, column)[0] for r in chosen)
    return hits / max(1, sum(per_run(r, column)[1] for r in chosen))


def any_share(runs: list[list[dict[str, Any]]], column: str, pick: Any = None) -> float:
    chosen = [runs[i] for i in pick] if pick is not None else runs
    steps = [s for r in chosen for s in r]
    return sum(1 for s in steps if s[column]) / max(1, len(steps))


def interval(value: tuple[float, float, float]) -> str:
    return f"{value[0]:.3f} [{value[1]:.3f}, {value[2]:.3f}]"


def ratio(runs: list[list[dict[str, Any]]], ours: str, theirs: str) -> str:
    def of(pick: Any) -> float:
        base = pooled(runs, theirs, pick)
        return pooled(runs, ours, pick) / base if base else float("inf")

    value, low, high = bootstrap(len(runs), of)
    return f"{value:.2f}x [{low:.2f}, {high:.2f}]"


def table(name: str, runs: list[list[dict[str, Any]]], methods: list[str]) -> list[str]:
    runs = [r for r in runs if r]
    steps = sum(len(r) for r in runs)
    items = sum(s["items"] for r in runs for s in r)
    if not items:
        return [f"\n## {name}: no step asks for evidence a cut left out (nothing to measure)"]
    out = [
        f"\n## {name}: {len(runs)} runs with an asked step, {steps} asked steps, {items} items",
        "| budget | method | items delivered | steps with one |",
        "|---|---|---|---|",
    ]
    for budget in BUDGETS:
        for method in methods:
            column = f"{method}@{budget}"
            share = bootstrap(len(runs), lambda pick, c=column: pooled(runs, c, pick))
            steps_any = bootstrap(len(runs), lambda pick, c=column: any_share(runs, c, pick))
            out.append(f"| {budget} | {method} | {interval(share)} | {interval(steps_any)} |")
    out += ["", "| budget | method | / grep | - bm25 | - newest |", "|---|---|---|---|---|"]
    for budget in BUDGETS:
        for method in methods:
            if method in BASELINES:
                continue
            column = f"{method}@{budget}"
            diffs = []
            for base in ("bm25", "newest"):
                value, low, high = pooled_difference(
                    [per_run(r, column) for r in runs], [per_run(r, f"{base}@{budget}") for r in runs]
                )
                diffs.append(f"{value:+.3f} [{low:+.3f}, {high:+.3f}]")
            out.append(
                f"| {budget} | {method} | {ratio(runs, column, f'grep@{budget}')} | {' | '.join(diffs)} |"
            )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", default="dev,gemini,nebius,java,lm32b")
    parser.add_argument("--split", default="validation", choices=["train", "validation", "all"])
    parser.add_argument("--limit", type=int, default=0, help="the first N runs of each dataset")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--tune", action="store_true", help="every setting of the grid (on --split train)")
    args = parser.parse_args(argv)
    if args.tune and args.split != "train":
        parser.error("--tune chooses settings: on --split train only")
    settings = GRID if args.tune else {"query": Weights()}
    absent: list[Path] = []
    for name, trajectories in datasets(args.data, args.split, args.limit, absent):
        if args.tune and name in UNSPLIT:
            continue  # never tuned on
        with ProcessPoolExecutor(args.jobs) as pool:
            runs = list(pool.map(_one, [(t, settings) for t in trajectories], chunksize=2))
        methods = [*BASELINES, *settings]
        if args.tune:
            runs = [r for r in runs if r]
            ranked = sorted(settings, key=lambda s: -pooled(runs, f"{s}@2000"))
            print(f"\n## {name} ({args.split}, {len(runs)} runs): settings by items delivered at 2000")
            for s in ranked:
                print(f"| {s} | " + " | ".join(f"{pooled(runs, f'{s}@{b}'):.3f}" for b in BUDGETS) + " |")
            print(
                "| " + " | ".join(f"{b}: {pooled(runs, f'{b}@2000'):.3f}" for b in BASELINES) + " |",
                flush=True,
            )
        else:
            print(
                "\n".join(table(f"{name} ({'all' if name in UNSPLIT else args.split})", runs, methods)),
                flush=True,
            )
    return data_absent.report(absent)


if __name__ == "__main__":
    sys.exit(main())
