"""Per-step cost of the select selector against the sliding window (not a test; numbers for the notes).

    python benchmarks/select_cost.py                    # synthetic 100 / 1k / 10k-step traces
    python benchmarks/select_cost.py --lengths 100,1000
    python benchmarks/select_cost.py --selection-only  # the selector's plan alone (is it flat?)

Time is the memory's own wall time per step (add_step + context) over the last 100 steps of each
trace, for `cw-select` and `sliding_window` on the same steps, quoted as a ratio (machines are noisy).
Both run a short trace untimed first: the first use of a module (the test parsers, their patterns) is a
one-off start-up cost of the process, not a per-step one.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time

from core_benchmark import synthetic_step

from contextweaver.baselines import BASELINES
from contextweaver.config import WeaverConfig
from contextweaver.nodes.extract import make_node, root_node
from contextweaver.nodes.graph import DependencyGraph
from contextweaver.protocols import Strategy
from contextweaver.records import Parent
from contextweaver.selectors.select import SelectSelector
from contextweaver.weaver import ContextWeaver

ROOT = [{"role": "system", "content": "agent"}, {"role": "user", "content": "fix helper calls"}]
WARMUP_STEPS = 100


def per_step_ms(make: type[Strategy] | None, n: int) -> tuple[float, float]:
    """(add_step + context, the selector's plan alone) in ms per step over the last 100 steps."""
    strategy: Strategy = (
        ContextWeaver(WeaverConfig(selector="select", mode="per_step")) if make is None else make()
    )
    strategy.begin(ROOT)
    rng = random.Random(7)
    times, plans = [], []
    gc.collect()  # the garbage of earlier runs is not this run's cost
    for i in range(1, n + 1):
        step = synthetic_step(rng, i)
        start = time.perf_counter()
        strategy.add_step(step)
        if i > n - 100:
            strategy.context()
            times.append(time.perf_counter() - start)
            if isinstance(strategy, ContextWeaver):
                start = time.perf_counter()
                strategy.selector.plan(strategy.graph, strategy.config)
                plans.append(time.perf_counter() - start)
        elif i > n - 200:
            strategy.context()
    return statistics.mean(times) * 1e3, statistics.mean(plans) * 1e3 if plans else 0.0


def selection_ms(n: int) -> float:
    """The selector's plan alone on an n-step graph (chain parents, no analyzer), GC paused while timed."""
    graph = DependencyGraph(3)
    graph.add(root_node(ROOT))
    selector, config, rng = SelectSelector(), WeaverConfig(selector="select"), random.Random(7)
    times = []
    for i in range(1, n + 1):
        graph.add(make_node(i, synthetic_step(rng, i)))
        graph.set_parents(i, [Parent(i - 1, 0.9, "previous step")])
        if i == n - 100:
            selector.plan(graph, config)  # index the history once, untimed
        if i > n - 100:
            gc.disable()
            start = time.perf_counter()
            selector.plan(graph, config)
            times.append(time.perf_counter() - start)
            gc.enable()
    return statistics.mean(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lengths", default="100,1000,10000")
    parser.add_argument("--selection-only", action="store_true", help="time the selector's plan alone")
    args = parser.parse_args()
    if args.selection_only:
        for n in (int(x) for x in args.lengths.split(",")):
            print(f"{n:>7} steps: select plan {selection_ms(n):.2f} ms/step", flush=True)
        return
    window = BASELINES.get("sliding_window")
    for make in (None, window):  # warm up both the same way, untimed
        per_step_ms(make, WARMUP_STEPS)
    print(
        f"{'steps':>7}{'cw-select ms/step':>19}{'of which selection':>20}{'sliding window ms/step':>24}{'ratio':>8}"
    )
    for n in (int(x) for x in args.lengths.split(",")):
        (select, plan), (base, _) = per_step_ms(None, n), per_step_ms(window, n)
        print(f"{n:>7}{select:>19.2f}{plan:>20.2f}{base:>24.2f}{select / base:>7.2f}x", flush=True)


if __name__ == "__main__":
    main()
