"""Where a strategy's misses come from: for each item a context lacks, the latest earlier step that
held it, how far back, whether in its output or in its call (thought and action), and what the context
did with that step (full, trimmed, compressed, dropped). The misses of one metric, grouped, most first:

    python benchmarks/miss_sources.py --data lm32b --split train --limit 60 -b 4000 --metric fresh
    python benchmarks/miss_sources.py --data lm32b --split train --limit 40 -s masking -b 8000 --metric history
    python benchmarks/miss_sources.py --data lm32b --split train --limit 40 -s cw-select -b none --metric far

`fresh`: the texts the next edit replaces, at steps where something was cut (edit freshness); `history`:
history evidence; `far`: next-step evidence whose latest output is 10+ steps back, grouped also by the
tool the next step calls. Datasets and splits are those of `benchmarks/frontier.py`; tune on `train`.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from statistics import median
from typing import Any

import data_absent
from frontier import DATASETS, UNSPLIT, runs_of
from rich.console import Console
from rich.progress import track

from contextweaver.eval.evidence import found_in, history_evidence, next_step_evidence
from contextweaver.eval.frontier import BUCKETS, bucket, latest_sources
from contextweaver.eval.replay import replay_steps
from contextweaver.eval.state_probes import cut, edit_old_texts
from contextweaver.eval.trajectory_run import parse_budgets
from contextweaver.formats.base import Trajectory
from contextweaver.strategies import build_strategy
from contextweaver.tokens import count_message, count_text
from contextweaver.weaving.budget import BudgetError

METRICS = ("fresh", "history", "far")
FAR = BUCKETS[-1]
"""The bucket of evidence 10+ outputs back (`eval/frontier.py`)."""


def wanted(trajectory: Trajectory, metric: str) -> dict[int, frozenset[str]]:
    """Next step index -> the items its context should hold, for `metric`."""
    if metric == "fresh":
        return edit_old_texts(trajectory)
    if metric == "history":
        return history_evidence(trajectory)
    sources = latest_sources(trajectory, next_step_evidence(trajectory))
    return {
        index: frozenset(item for item, source in items.items() if bucket(index - 1 - source) == FAR)
        for index, items in sources.items()
    }


def tool(action: str) -> str:
    """The tool a call uses: its first word, and the editor's command (`str_replace_editor create`)."""
    words = action.split()
    if not words:
        return "(none)"
    return " ".join(words[:2]) if words[0] == "str_replace_editor" and len(words) > 1 else words[0][:24]


def source(trajectory: Trajectory, item: str, before: int) -> tuple[int, str] | None:
    """The latest step up to `before` (1-based) holding `item`, and where: its output or its call."""
    for index in range(before, 0, -1):
        step = trajectory.steps[index - 1]
        if item in f"{step.thought}\n{step.action}":
            return index, "call"
        if item in (step.observation or ""):
            return index, "output"
    return None


def misses(
    trajectory: Trajectory, asked: dict[int, frozenset[str]], strategy: str, budget: int | None, metric: str
) -> Iterator[tuple[Any, ...]]:
    """One key per item asked for: ("held",) or ("missed", the earliest text holding it (`earliest_kind`),
    where, distance bucket, the step's mode[, next tool])."""
    last = len(trajectory.steps)
    for replayed in replay_steps(trajectory, build_strategy(strategy).strategy, [budget]):
        items = asked.get(replayed.index + 1)
        if replayed.index >= last or not items:
            continue
        context = replayed.contexts[budget]
        if metric == "fresh" and not cut(context):
            continue
        held = found_in(items, context.messages)
        modes = {d.index: d.mode for d in context.decisions}
        nxt = tool(trajectory.steps[replayed.index].action) if metric == "far" else None
        for item in items:
            if item in held:
                yield ("held",)
                continue
            kind = earliest_kind(trajectory, item, replayed.index)
            found = source(trajectory, item, replayed.index)
            if found is None:
                yield ("missed", kind, "the root or several steps together")
                continue
            index, where = found
            key = (where, bucket(replayed.index - index), modes.get(index, "?"))
            yield ("missed", kind, *key, *((nxt,) if nxt else ()))


def earliest_kind(trajectory: Trajectory, item: str, before: int) -> str:
    """Which text of the steps up to `before` holds `item`: an action, else a thought, else an output."""
    steps = trajectory.steps[:before]
    if any(item in step.action for step in steps):
        return "action"
    return "thought" if any(item in step.thought for step in steps) else "output"


def action_room(
    trajectory: Trajectory, asked: Iterable[int], budget: int | None
) -> Iterator[tuple[int, int]]:
    """At each step `asked`: the tokens of every earlier step's action, and the room above the root."""
    root = sum(count_message(m) for m in trajectory.root)
    actions = [count_text(step.action) for step in trajectory.steps]
    for index in asked:
        yield sum(actions[: index - 1]), (budget or 0) - root


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", default="lm32b")
    parser.add_argument("--split", default="train", choices=["train", "validation", "all"])
    parser.add_argument("-s", "--strategy", default="cw")
    parser.add_argument("-b", "--budget", default="8000", help="one budget, or none")
    parser.add_argument("--metric", default="fresh", choices=METRICS)
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args(argv)
    budget = parse_budgets(args.budget)[0]
    if isinstance(budget, str):
        parser.error("one token count or none: a run's own scale (half) is not taken here")
    runs = runs_of(args.data, "all" if args.data in UNSPLIT else args.split, args.limit)
    if not runs:
        if not DATASETS[args.data].exists():
            return data_absent.report([DATASETS[args.data]])
        print(f"{args.data}: no runs of the {args.split} split", file=sys.stderr)
        return 1
    counts: Counter[tuple[Any, ...]] = Counter()
    kinds: Counter[str] = Counter()
    sizes: list[tuple[int, int]] = []
    unfit = 0
    for trajectory in track(runs, f"{args.data} {args.strategy}", console=Console(stderr=True)):
        try:
            asked = wanted(trajectory, args.metric)
            for key in misses(trajectory, asked, args.strategy, budget, args.metric):
                counts[key[:1] + key[2:]] += 1
                kinds.update(key[1:2])
            sizes += action_room(trajectory, asked, budget)
        except BudgetError:  # the budget cannot hold this run's root: left out, as in budget_vs_masking
            unfit += 1
    if unfit:
        print(f"{unfit} run(s) left out: {args.budget} tokens cannot hold their system prompt and task")
    total = sum(counts.values())
    held = counts.pop(("held",), 0)
    missed = total - held
    print(f"{args.data} ({len(runs)} runs), {args.strategy} at {args.budget}, {args.metric}: "
          f"{held / max(1, total):.3f} held ({held} of {total}); {missed} missed, from:")  # fmt: skip
    print("| where | back | the step in the context | next tool | items | of the misses |")
    print("|---|---|---|---|---|---|")
    for key, count in counts.most_common(args.top):
        cells = [*key[1:], "", "", ""][:4]
        print(f"| {' | '.join(str(c) for c in cells)} | {count} | {count / max(1, missed):.0%} |")
    print(f"Of the misses, some earlier action holds {kinds['action']}, only an earlier thought "
          f"{kinds['thought']}, only an output {kinds['output']}: with every call's action kept, "
          f"{(held + kinds['action']) / max(1, total):.3f} held; with every thought too, "
          f"{(held + kinds['action'] + kinds['thought']) / max(1, total):.3f}.")  # fmt: skip
    if sizes and budget:
        print(f"Every earlier action takes {median(a for a, _ in sizes):,.0f} tokens at the steps asked "
              f"(median), the room above the root {median(r for _, r in sizes):,.0f}.")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
