"""Item by item, where a strategy and observation masking differ: the next-step evidence one context holds and
the other lacks, grouped by where the item was (the latest earlier output or call holding it), how many
steps back, what each strategy did with that step (full, trimmed, compressed, dropped) and whether the
strategy's context was a cut. The answer to "what does masking keep that the default drops?":

    python benchmarks/against_masking.py --data java --split train --limit 40 -b 8000
    python benchmarks/against_masking.py --data lm32b --split train -b 8000 --big 1000   # runs of big steps
    python benchmarks/against_masking.py --data dev -b 3000 -s cw-select --examples 10

Distances of 12 or more are grouped as 12. `--examples` prints that many lost items with their run and
step, to read in `contextweaver replay`. Datasets and splits are those of `benchmarks/frontier.py`; tune
on `train`.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import data_absent
from budget_vs_masking import mean_step
from frontier import datasets
from miss_sources import source

from contextweaver.eval.evidence import found_in, next_step_evidence
from contextweaver.eval.replay import replay_steps
from contextweaver.eval.trajectory_run import parse_budgets, trajectory_id
from contextweaver.formats.base import Trajectory
from contextweaver.strategies import build_strategy
from contextweaver.weaving.budget import BudgetError

FAR = 12
"""Steps back from which items are grouped together."""
Key = tuple[Any, ...]


def differences(job: tuple[Trajectory, str, int]) -> list[tuple[str, Key, tuple[str, int, str]]]:
    """("lost" or "won", the item's group, (run, step, item)) for each item one context holds and the other
    lacks; nothing for a run the budget refuses."""
    trajectory, strategy, budget = job
    asked = {e.index: e.items for e in next_step_evidence(trajectory)}
    try:
        ours = list(replay_steps(trajectory, build_strategy(strategy).strategy, [budget]))
        theirs = list(replay_steps(trajectory, build_strategy("masking").strategy, [budget]))
    except BudgetError:
        return []
    return list(_compared(trajectory, asked, ours, theirs, budget))


def _compared(
    trajectory: Trajectory, asked: dict[int, frozenset[str]], ours: list[Any], theirs: list[Any], budget: int
) -> Iterator[tuple[str, Key, tuple[str, int, str]]]:
    run = trajectory_id(trajectory)
    for mine, masked in zip(ours, theirs, strict=True):
        items = asked.get(mine.index + 1)
        if not items:
            continue
        a, b = mine.contexts[budget], masked.contexts[budget]
        held_a, held_b = found_in(items, a.messages), found_in(items, b.messages)
        modes_a = {d.index: d.mode for d in a.decisions}
        modes_b = {d.index: d.mode for d in b.decisions}
        for item in sorted(items):
            if (item in held_a) == (item in held_b):
                continue
            found = source(trajectory, item, mine.index)
            if found is None:
                key: Key = ("the root or several steps", "", "", "", "")
            else:
                index, where = found
                back = min(FAR, mine.index - index)
                key = (where, back, modes_a.get(index, "?"), modes_b.get(index, "?"), bool(a.compacted))
            yield ("lost" if item in held_b else "won"), key, (run, mine.index, item)


def table(title: str, counts: Counter[Key], top: int) -> list[str]:
    total = sum(counts.values())
    lines = [f"{title}: {total} item(s)", "| where | back | the strategy's step | masking's step | cut | items |",
             "|---|---|---|---|---|---|"]  # fmt: skip
    for key, count in counts.most_common(top):
        where, back, ours, theirs, cut = key
        back_text = f"{back}+" if back == FAR else str(back)
        lines.append(f"| {where} | {back_text} | {ours} | {theirs} | {'cut' if cut else ''} | {count} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", default="lm32b")
    parser.add_argument("--split", default="train", choices=["train", "validation", "all"])
    parser.add_argument("-s", "--strategy", default="cw")
    parser.add_argument("-b", "--budget", default="8000", help="one token count")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--big", type=float, default=0.0, help="only runs whose mean step is at least this")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--examples", type=int, default=0, help="lost items to print, with run and step")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    budget = parse_budgets(args.budget)[0]
    if not isinstance(budget, int):
        parser.error("one token count: masking and the strategy are compared under the same budget")
    absent: list[Any] = []
    for name, runs in datasets(args.data, args.split, args.limit, absent):
        chosen = [r for r in runs if mean_step(r) >= args.big]
        with ProcessPoolExecutor(args.jobs) as pool:
            found = [
                d for run in pool.map(differences, [(r, args.strategy, budget) for r in chosen]) for d in run
            ]
        lost = Counter(key for kind, key, _ in found if kind == "lost")
        won = Counter(key for kind, key, _ in found if kind == "won")
        print(f"## {name}, {len(chosen)} runs, {args.strategy} against masking at {budget}")
        print("\n".join(table(f"masking holds, {args.strategy} lacks", lost, args.top)))
        print("\n".join(table(f"{args.strategy} holds, masking lacks", won, args.top)))
        for run, step, item in [example for kind, _, example in found if kind == "lost"][: args.examples]:
            print(f"- {run}, the context after step {step}: {item[:80]!r}")
    return data_absent.report(absent)


if __name__ == "__main__":
    sys.exit(main())
