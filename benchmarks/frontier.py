"""The recency frontier, per dataset: each strategy's pooled recall, mean tokens, margin over the
window-N frontier (N = 2..20) at its own tokens with a bootstrap 95% interval over runs, recall by
evidence distance (0-4, 5-9, 10+), and history evidence under budgets. Writes a recall-vs-tokens PNG.

    python benchmarks/frontier.py                         # dev runs, each training set's validation split, OpenHands
    python benchmarks/frontier.py --split train -s cw-select,sliding_window
    python benchmarks/frontier.py --data dev --budgets none,8000 --plot docs/frontier_dev.png

Datasets are read in place from ../shared/data (skipped when absent). The split is fixed by
`contextweaver.eval.splits.split_of`; tune on `train`, report `validation` and the dev runs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import data_absent

from contextweaver.eval.frontier import BUCKETS, bootstrap_margin, frontier_points, headroom_target, run_point
from contextweaver.eval.splits import split_of
from contextweaver.eval.trajectory_run import evaluate, parse_budgets, trajectory_id
from contextweaver.formats import load_trajectories, load_trajectory

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
DATASETS = {
    "dev": DATA / "trajectories" / "mini-swe-agent",
    "gemini": DATA / "train" / "mini-swe-agent__gemini-3-pro__303.tar.gz",
    "nebius": DATA / "train" / "swe-agent__nebius-llama__150.tar.gz",
    "java": DATA / "train" / "swe-agent__gpt-4o__multi-swe-bench-java__89.tar.gz",
    "lm32b": DATA / "train" / "swe-agent__swe-agent-lm-32b__205.tar.gz",
    "openhands": DATA / "trajectories" / "openhands-sdk" / "output.critic_attempt_1.jsonl",
}
UNSPLIT = ("dev", "openhands")
"""Never tuned on: every run is reported."""
STRATEGIES = "sliding_window,masking,cw,cw-paper,cw-select"


def runs_of(name: str, split: str, limit: int = 0) -> list[Any]:
    """The dataset's runs of `split` (dev and OpenHands are never split), the first `limit` when given."""
    path = DATASETS[name]
    if not path.exists():
        return []
    if path.is_dir():
        runs = [load_trajectory(p) for p in sorted(path.glob("*.traj.json"))]
    else:
        runs = [r for r in load_trajectories(path) if split == "all" or split_of(trajectory_id(r)) == split]
    return runs[:limit] if limit else runs


def datasets(names: str, split: str, limit: int, absent: list[Path]) -> Iterator[tuple[str, list[Any]]]:
    """Each named dataset with its runs of `split` (see `runs_of`); a dataset not on disk is added to
    `absent` (for `data_absent.report`), one without runs of the split is said and passed over."""
    for name in [d.strip() for d in names.split(",") if d.strip()]:
        if name not in DATASETS:
            sys.exit(f"--data {name}: no such dataset; the datasets are {', '.join(DATASETS)}")
        if not DATASETS[name].exists():
            absent.append(DATASETS[name])
            continue
        runs = runs_of(name, "all" if name in UNSPLIT else split, limit)
        if not runs:
            print(f"## {name}: no runs of the {split} split")
            continue
        yield name, runs


def _one(job: tuple[Any, str, list[Any]]) -> dict[str, Any]:
    trajectory, strategy, budgets = job
    return evaluate(trajectory, strategy, budgets)


def table(name: str, results: list[dict[str, Any]], strategies: list[str], budgets: list[str]) -> list[str]:
    by_run: dict[str, dict[str, Any]] = {}
    for result in results:
        by_run.setdefault(result["trajectory"], {})[result["strategy"]] = result
    run_ids = sorted(by_run)
    windows = [by_run[r][strategies[0]]["windows"] for r in run_ids]
    front = frontier_points(windows)
    lines = [
        f"## {name}: {len(run_ids)} runs; frontier " + " ".join(f"w{n}={r:.3f}@{t:,.0f}" for n, t, r in front)
    ]
    head = "| strategy | budget | recall | tokens | margin [95% CI] | target | 0-4 | 5-9 | 10+ | history evidence |"
    lines += [head, "|" + "---|" * 10]
    for strategy in strategies:
        for budget in budgets:
            steps_per_run = [by_run[r][strategy]["budgets"][budget] for r in run_ids]
            points = [run_point(steps) for steps in steps_per_run]
            items = sum(p.items for p in points)
            recall = sum(p.covered for p in points) / items if items else 1.0
            tokens = sum(p.tokens_mean for p in points) / len(points)
            hist_items = sum(s.get("history_items", 0) for steps in steps_per_run for s in steps)
            hist = sum(s.get("history_covered", 0) for steps in steps_per_run for s in steps) / max(
                1, hist_items
            )
            dist = []
            for b in BUCKETS:
                covered = sum(p.buckets[b][0] for p in points)
                total = sum(p.buckets[b][1] for p in points)
                dist.append(f"{covered / total:.3f}" if total else "-")
            if budget == "none":
                value, low, high = bootstrap_margin(points, windows)
                edge = f"{value:+.3f} [{low:+.3f}, {high:+.3f}]"
                target = f"{headroom_target(points, windows):+.3f}"
            else:
                edge, target = "(budgeted)", "-"
            lines.append(
                f"| {strategy} | {budget} | {recall:.3f} | {tokens:,.0f} | {edge} | {target} | "
                + " | ".join(dist)
                + f" | {hist:.3f} |"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", default="dev,gemini,nebius,java,lm32b,openhands")
    parser.add_argument("--split", default="validation", choices=["train", "validation", "all"])
    parser.add_argument("-s", "--strategies", default=STRATEGIES)
    parser.add_argument(
        "--budgets",
        default="none,16000",
        help="none plus budgets above every root (SWE-agent prompts reach 10k tokens)",
    )
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument(
        "--limit", type=int, default=0, help="only the first N runs of each dataset (to iterate)"
    )
    parser.add_argument("--plot", default="", help="write the recall-vs-tokens PNG here (first dataset)")
    args = parser.parse_args(argv)
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    budgets = parse_budgets(args.budgets)
    keys = ["none" if b is None else str(b) for b in budgets]
    if "none" not in keys:
        parser.error("--budgets must include none: the margin is measured unbounded")
    absent: list[Path] = []
    for name, runs in datasets(args.data, args.split, args.limit, absent):
        jobs = [(run, strategy, budgets) for run in runs for strategy in strategies]
        with ProcessPoolExecutor(args.jobs) as pool:
            results = list(pool.map(_one, jobs, chunksize=4))
        print("\n".join(table(name, results, strategies, keys)), flush=True)
        if args.plot:
            from contextweaver.eval.frontier_plot import frontier_png

            Path(args.plot).write_bytes(frontier_png(results, name))
            print(f"plot: {args.plot}")
            args.plot = ""
    return data_absent.report(absent)


if __name__ == "__main__":
    sys.exit(main())
