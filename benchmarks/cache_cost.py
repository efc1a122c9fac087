"""What a context costs once the provider's prompt cache is counted, and what each cut keeps.

    python benchmarks/cache_cost.py                               # dev runs + every training set's validation split
    python benchmarks/cache_cost.py --sets gemini --split train   # where the water marks are tuned
    python benchmarks/cache_cost.py --sets dev -c lazy.low_water=0.7   # ContextWeaver settings for the lazy rows

Per data set, strategy and budget: next-step evidence recall and history evidence (docs/evaluation.md) on
average and at the steps right after ContextWeaver's default cuts the context (the same steps for
every strategy), context tokens, input over the full history's, the share a provider's prefix cache
serves, and input billed at Anthropic's and OpenAI's cache prices over the full history billed
without a cache (contextweaver.prompt_cache), and the floor no policy can go under: each request
reads the cached root and writes only the newest step (trimmed to the room above the root), nothing
else; when half of masking's bill is below that floor (or below never cutting at all), that target
cannot be met by any context worth the name. The training archives are read from a temporary
directory; runs are split by contextweaver.eval.splits.split_of.
"""

from __future__ import annotations

import argparse
import sys
import tarfile
import tempfile
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import data_absent

from contextweaver.eval.aggregate import cache_columns
from contextweaver.eval.metrics import mean, recall
from contextweaver.eval.splits import split_of
from contextweaver.eval.trajectory_run import budget_key, evaluate, parse_budgets, trajectory_id
from contextweaver.formats import Trajectory, TrajectoryError, load_trajectories
from contextweaver.nodes.extract import root_node
from contextweaver.prompt_cache import PRICES
from contextweaver.weaving.budget import BudgetError

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
SETS = {
    "dev": DATA / "trajectories" / "mini-swe-agent",
    "gemini": DATA / "train" / "mini-swe-agent__gemini-3-pro__303.tar.gz",
    "nebius": DATA / "train" / "swe-agent__nebius-llama__150.tar.gz",
    "java": DATA / "train" / "swe-agent__gpt-4o__multi-swe-bench-java__89.tar.gz",
    "lm32b": DATA / "train" / "swe-agent__swe-agent-lm-32b__205.tar.gz",
}
DEFAULT = "cw"
"""ContextWeaver's default settings (lazy mode); its cuts mark the steps of the at-cut columns."""
STRATEGIES = ("full", "sliding_window", "masking", "cw-perstep", "cw-recency", "llm_summary_lazy", DEFAULT)
SUFFIXES = (".traj.json", ".traj", ".json", ".jsonl")


def load_set(name: str, split: str, limit: int | None) -> list[Trajectory]:
    """The runs of one set (the dev runs are never split); unreadable files are reported and skipped."""
    path = SETS[name]
    if not path.exists():
        return []
    if path.is_dir():
        return _load_files(sorted(p for p in path.iterdir() if p.name.endswith(SUFFIXES)), None, limit)
    with tempfile.TemporaryDirectory() as tmp, tarfile.open(path) as archive:
        archive.extractall(tmp, filter="data")
        files = sorted(p for p in Path(tmp).rglob("*") if p.name.endswith(SUFFIXES))
        return _load_files(files, split, limit)


def _load_files(files: Sequence[Path], split: str | None, limit: int | None) -> list[Trajectory]:
    runs: list[Trajectory] = []
    failed = 0
    for file in files:
        try:
            loaded = load_trajectories(file)
        except TrajectoryError:
            failed += 1
            continue
        for run in loaded:
            if len(run.steps) > 1 and (split is None or split_of(trajectory_id(run)) == split):
                runs.append(run)
    if failed:
        print(f"  {failed} file(s) in no readable format, skipped", file=sys.stderr)
    return runs[:limit] if limit else runs


def _one(job: tuple[Trajectory, str, list[int | None], list[str]]) -> dict[str, Any] | None:
    """One run through one strategy; None when a budget cannot hold its system prompt and task."""
    trajectory, strategy, budgets, overrides = job
    cw = strategy.startswith("cw")
    try:
        result = evaluate(trajectory, strategy, budgets, overrides=overrides if cw else ())
    except BudgetError:
        return None
    result["root_tokens"] = root_node(trajectory.root).full_tokens
    return result


def floor_billed(steps: Sequence[dict[str, Any]], root: int, budget: int | None) -> float:
    """Anthropic-billed input of the cheapest requests ANY policy could send that keeps the root verbatim
    and the newest step (trimmed to the room above the root at most): the root read at the cache price
    after the first request (even a root shorter than the provider's minimum prefix, which a longer
    context could get cached), the new step written once (at the plain price while root and step are
    too short to cache), nothing else read. A lower bound, not a policy."""
    price = PRICES["anthropic"]
    room = None if budget is None else max(budget - root, 0)
    billed = 0.0
    previous = root
    for i, step in enumerate(steps):
        new = step["full_tokens"] - previous
        previous = step["full_tokens"]
        new = new if room is None else min(new, room)
        if i == 0:
            billed += price.billed(root + new, 0)
        else:
            billed += root * price.read + new * (price.write if root + new >= price.min_prefix else 1.0)
    return billed


def table(results: list[dict[str, Any]], budgets: Sequence[int | None]) -> list[dict[str, Any]]:
    """One row per (strategy, budget): averages and the at-cut columns, pooled over steps and runs."""
    cuts: dict[tuple[str, str], set[int]] = {}
    for r in results:
        if r["strategy"] == DEFAULT:
            for key, steps in r["budgets"].items():
                cuts[(r["trajectory"], key)] = {s["step"] for s in steps if s.get("compacted")}
    rows = []
    for budget in map(budget_key, budgets):
        for strategy in dict.fromkeys(r["strategy"] for r in results):
            runs = [r for r in results if r["strategy"] == strategy]
            per_run = [r["budgets"][budget] for r in runs]
            at_cut = [
                [s for s in steps if s["step"] in cuts.get((r["trajectory"], budget), ())]
                for r, steps in zip(runs, per_run, strict=True)
            ]
            every = [s for steps in per_run for s in steps]
            limit = None if budget == "none" else int(budget)
            floor = sum(
                floor_billed(steps, r["root_tokens"], limit) for r, steps in zip(runs, per_run, strict=True)
            )
            rows.append(
                {
                    "strategy": strategy,
                    "budget": budget,
                    "recall": _pooled(per_run, "covered", "items"),
                    "history": _pooled(per_run, "history_covered", "history_items"),
                    "recall_cut": _pooled(at_cut, "covered", "items"),
                    "history_cut": _pooled(at_cut, "history_covered", "history_items"),
                    "cuts": sum(len(s) for s in at_cut),
                    "tokens": mean(mean(s["tokens"] for s in steps) for steps in per_run if steps),
                    **cache_columns(every),
                    "floor_anthropic": floor / max(1, sum(s["full_tokens"] for s in every)),
                }
            )
    return rows


def _pooled(per_run: Sequence[Sequence[dict[str, Any]]], hit: str, items: str) -> float:
    return recall((sum(s[hit] for s in steps), sum(s[items] for s in steps)) for steps in per_run)[0]


COLUMNS = [
    ("strategy", "{}"),
    ("budget", "{}"),
    ("recall", "{:.3f}"),
    ("history", "{:.3f}"),
    ("recall_cut", "{:.3f}"),
    ("history_cut", "{:.3f}"),
    ("cuts", "{}"),
    ("tokens", "{:,.0f}"),
    ("input_vs_full", "{:.2f}"),
    ("cache_share", "{:.2f}"),
    ("billed_anthropic", "{:.2f}"),
    ("billed_openai", "{:.2f}"),
    ("floor_anthropic", "{:.3f}"),
]


def print_table(name: str, runs: int, rows: list[dict[str, Any]]) -> None:
    print(f"\n## {name}: {runs} runs\n")
    print("| " + " | ".join(c for c, _ in COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS))
    for row in rows:
        cells = [
            "-" if row.get(c) is None or row[c] != row[c] else pattern.format(row[c])
            for c, pattern in COLUMNS
        ]
        print("| " + " | ".join(cells) + " |")
    for line in verdicts(rows):
        print(line)


def verdicts(rows: list[dict[str, Any]]) -> list[str]:
    """The targets: no budget costs at most 1.05x full history; at 8k/16k half of masking's bill or less,
    with recall and history evidence at least masking's."""
    at = {(r["strategy"], r["budget"]): r for r in rows}
    out = []
    if (DEFAULT, "none") in at and ("full", "none") in at:
        ratio = at[(DEFAULT, "none")]["billed_anthropic"] / at[("full", "none")]["billed_anthropic"]
        out.append(f"- no budget: default billed {ratio:.3f}x full history's -> {_mark(ratio <= 1.05)}")
    for budget in ("8000", "16000"):
        mine, masking = at.get((DEFAULT, budget)), at.get(("masking", budget))
        if mine is None or masking is None:
            continue
        cost = mine["billed_anthropic"] / masking["billed_anthropic"]
        holds = cost <= 0.5 and mine["recall"] >= masking["recall"] and mine["history"] >= masking["history"]
        bill = masking["billed_anthropic"]
        line = f"- {budget}: any policy's floor {mine['floor_anthropic'] / bill:.2f}x masking's; "
        if ("full", "none") in at:
            line += f"never cutting (full history, no budget) {at[('full', 'none')]['billed_anthropic'] / bill:.2f}x; "
        out.append(
            f"{line}default billed {cost:.2f}x masking's; recall {mine['recall']:.3f} vs "
            f"{masking['recall']:.3f}; history {mine['history']:.3f} vs {masking['history']:.3f} -> {_mark(holds)}"
        )
    return out


def _mark(holds: bool) -> str:
    return "HOLDS" if holds else "does not hold"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sets", default="dev,gemini,nebius,java,lm32b")
    parser.add_argument("--split", default="validation", choices=("train", "validation"))
    parser.add_argument("--budgets", default="4000,8000,16000,none")
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--limit", type=int, default=None, help="at most this many runs per set")
    parser.add_argument("-c", dest="overrides", action="append", default=[], help="ContextWeaver key=value")
    parser.add_argument("-j", "--workers", type=int, default=2)
    args = parser.parse_args()
    budgets = parse_budgets(args.budgets)
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    names = [s.strip() for s in args.sets.split(",") if s.strip()]
    for name in names:
        runs = load_set(name, args.split, args.limit)
        if not runs:
            continue
        jobs = [(run, strategy, budgets, args.overrides) for strategy in strategies for run in runs]
        with ProcessPoolExecutor(max_workers=args.workers) as pool:
            done = list(pool.map(_one, jobs, chunksize=4))
        too_big = {job[0].source for job, result in zip(jobs, done, strict=True) if result is None}
        results = [r for r in done if r is not None and r["source"] not in too_big]
        label = name if name == "dev" else f"{name} ({args.split} split)"
        if too_big:
            label += f", {len(too_big)} more left out: the smallest budget cannot hold their system prompt and task"
        print_table(label, len(runs) - len(too_big), table(results, budgets))
    sys.exit(data_absent.report(SETS[name] for name in names if not SETS[name].exists()))


if __name__ == "__main__":
    main()
