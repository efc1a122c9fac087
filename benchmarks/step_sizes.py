"""Step sizes on the training runs: what a suggested budget leaves room for (`weaving/budget.py`).

For each dataset, each run's 75th percentile of step tokens (call and output, o200k), then the median over
runs, beside the root's median size:

    python benchmarks/step_sizes.py                 # train split of every training set
    python benchmarks/step_sizes.py --split validation

TYPICAL_STEP is the median of the per-dataset medians on the train split.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from frontier import DATASETS, UNSPLIT, runs_of  # noqa: E402

from contextweaver.nodes.extract import make_node, root_node  # noqa: E402
from contextweaver.weaving.budget import ROOM_STEPS, TYPICAL_STEP  # noqa: E402


def step_tokens(trajectory) -> list[int]:  # type: ignore[no-untyped-def]
    return [make_node(i + 1, step).full_tokens for i, step in enumerate(trajectory.steps)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="train")
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args(argv)
    medians = []
    print(
        f"| dataset | runs | root (median) | step p75 per run (median over runs) | steps a {ROOM_STEPS}-step room holds |"
    )
    print("|---|---|---|---|---|")
    for name in DATASETS:
        if name in UNSPLIT:
            continue
        runs = runs_of(name, args.split, args.limit)
        if not runs:
            continue
        p75s, roots = [], []
        for run in runs:
            sizes = sorted(step_tokens(run))
            if sizes:
                p75s.append(sizes[min(len(sizes) - 1, int(0.75 * len(sizes)))])
            roots.append(root_node(run.root).full_tokens)
        median = statistics.median(p75s)
        medians.append(median)
        print(
            f"| {name} | {len(runs)} | {statistics.median(roots):,.0f} | {median:,.0f} | "
            f"{ROOM_STEPS * TYPICAL_STEP / median:.1f} |"
        )
    if not medians:
        print("no runs: fetch the data with `python scripts/fetch_data.py`", file=sys.stderr)
        return 2
    print(
        f"\nmedian of the datasets' medians: {statistics.median(medians):,.0f} (TYPICAL_STEP = {TYPICAL_STEP})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
