"""Core benchmark (not a test): recall and tokens on the dev trajectories, and per-step cost.

    python benchmarks/core_benchmark.py                 # dev set + synthetic 100/1k/10k traces
    python benchmarks/core_benchmark.py --skip-synthetic

Recall is next-step evidence recall (docs/evaluation.md); tokens are o200k tokens of the context as
plain text, averaged over steps then trajectories; time is the memory's own wall time per step
(add_step + context), quoted as a ratio to the sliding window because these machines are noisy.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

import data_absent

from contextweaver.eval.evidence import covered, next_step_evidence
from contextweaver.eval.replay import replay
from contextweaver.formats import load_trajectory
from contextweaver.protocols import Strategy
from contextweaver.records import Step
from contextweaver.strategies import build_strategy
from contextweaver.weaver import ContextWeaver

DEV = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "trajectories" / "mini-swe-agent"
STRATEGIES = ("full", "sliding_window", "masking", "cw-paper", "cw-frontier", "cw")


def p95(values: list[float]) -> float:
    return sorted(values)[int(0.95 * (len(values) - 1))]


def _build(name: str) -> Strategy:
    """The selectors compared as the paper runs them: every context woven anew (`mode: per_step`);
    the default lazy mode and its cache cost are measured by benchmarks/cache_cost.py."""
    return build_strategy(name, {"mode": "per_step"} if name.startswith("cw") else None).strategy


def dev_set(budget: int | None) -> None:
    files = sorted(DEV.glob("*.traj.json"))
    if not files:
        sys.exit(data_absent.report([DEV]))
    trajectories = [load_trajectory(f) for f in files]
    evidence = [{e.index: e.items for e in next_step_evidence(t)} for t in trajectories]
    rows = {}
    for name in STRATEGIES:
        hits = total = 0
        per_trajectory, mean_tokens, all_tokens, seconds = [], [], [], []
        for trajectory, needed in zip(trajectories, evidence, strict=True):
            t_hits = t_total = 0
            tokens = []
            for record in replay(trajectory, lambda name=name: _build(name), budget):
                seconds.append(record.seconds)
                items = needed.get(record.index + 1)
                if items is None:
                    continue
                t_hits += covered(items, record.context.text())
                t_total += len(items)
                tokens.append(record.text_tokens)
            hits, total = hits + t_hits, total + t_total
            per_trajectory.append(t_hits / t_total if t_total else 1.0)
            mean_tokens.append(statistics.mean(tokens))
            all_tokens += tokens
        rows[name] = (
            hits / total,
            statistics.mean(per_trajectory),
            statistics.mean(mean_tokens),
            p95(all_tokens),
            statistics.mean(seconds),
        )
    base = rows["sliding_window"][4]
    print(f"\n{len(files)} dev trajectories, budget={budget}")
    print(
        f"{'strategy':<16}{'pooled recall':>14}{'mean recall':>13}{'mean tokens':>13}{'p95 tokens':>12}{'time/step vs sw':>17}"
    )
    for name, (pooled, mean, tokens, high, secs) in rows.items():
        print(f"{name:<16}{pooled:>14.3f}{mean:>13.3f}{tokens:>13,.0f}{high:>12,.0f}{secs / base:>16.2f}x")


def synthetic_step(rng: random.Random, i: int) -> Step:
    """A plausible step: reads or edits one of 40 files (30 numbered lines naming helpers), sometimes runs
    the tests; a read's thought names a helper, so selectors that follow words have something to find."""
    path = f"pkg/module_{rng.randrange(40)}.py"
    kind = rng.random()
    if kind < 0.5:
        lines = "\n".join(
            f"{n:>4}  def func_{i}_{n}(arg_{n}): return helper_{rng.randrange(500)}(arg_{n})"
            for n in range(30)
        )
        return Step(f"Read {path}; where is helper_{rng.randrange(500)} called?", f"nl -ba {path}", lines)
    if kind < 0.8:
        return Step(f"Patch {path}.", f"sed -i 's/helper_{i}/helper_{i + 1}/' {path}", "")
    outcome = "1 failed, 41 passed in 1.02s" if rng.random() < 0.4 else "42 passed in 0.98s"
    return Step("Run the tests.", "python -m pytest -q tests/", f"....F...\n{outcome}")


def synthetic(lengths: tuple[int, ...]) -> None:
    print("\nsynthetic traces: memory time per step (add_step, context) over the last 100 steps")
    print(f"{'steps':>7}{'add_step ms':>13}{'context ms':>12}{'messages':>10}{'context us/message':>20}")
    for n in lengths:
        rng = random.Random(7)
        weaver = ContextWeaver()
        weaver.begin(
            [{"role": "system", "content": "agent"}, {"role": "user", "content": "fix helper calls"}]
        )
        add_times, context_times, sizes = [], [], []
        for i in range(1, n + 1):
            step = synthetic_step(rng, i)
            start = time.perf_counter()
            weaver.add_step(step)
            middle = time.perf_counter()
            if i > n - 100:
                context = weaver.context()
                context_times.append(time.perf_counter() - middle)
                sizes.append(len(context.messages))
                add_times.append(middle - start)
        per_message = statistics.mean(context_times) / statistics.mean(sizes) * 1e6
        print(
            f"{n:>7}{statistics.mean(add_times) * 1e3:>13.2f}{statistics.mean(context_times) * 1e3:>12.2f}{statistics.mean(sizes):>10.0f}{per_message:>20.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--budget", type=int, default=None)
    parser.add_argument("--skip-synthetic", action="store_true")
    parser.add_argument("--lengths", default="100,1000,10000")
    args = parser.parse_args()
    dev_set(args.budget)
    if not args.skip_synthetic:
        synthetic(tuple(int(x) for x in args.lengths.split(",")))


if __name__ == "__main__":
    main()
