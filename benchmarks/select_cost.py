"""Per-step cost of the select selector against the sliding window (not a test; numbers for the notes).

    python benchmarks/select_cost.py                    # synthetic 100 / 1k / 10k-step traces
    python benchmarks/select_cost.py --lengths 100,1000

Time is the memory's own wall time per step (add_step + context) over the last 100 steps of each
trace, for `cw-select` and `sliding_window` on the same steps, quoted as a ratio (machines are noisy).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from contextweaver.baselines import BASELINES
from contextweaver.config import WeaverConfig
from contextweaver.protocols import Strategy
from contextweaver.types import Step
from contextweaver.weaver import ContextWeaver

ROOT = [{"role": "system", "content": "agent"}, {"role": "user", "content": "fix helper calls"}]


def synthetic_step(rng: random.Random, i: int) -> Step:
    """Reads one of 40 files (30 numbered lines naming helpers), edits one, or runs the tests."""
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


def per_step_ms(make: type[Strategy] | None, n: int) -> float:
    strategy: Strategy = ContextWeaver(WeaverConfig(selector="select")) if make is None else make()
    strategy.begin(ROOT)
    rng = random.Random(7)
    times = []
    for i in range(1, n + 1):
        step = synthetic_step(rng, i)
        start = time.perf_counter()
        strategy.add_step(step)
        if i > n - 100:
            strategy.context()
            times.append(time.perf_counter() - start)
        elif i > n - 200:
            strategy.context()
    return statistics.mean(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lengths", default="100,1000,10000")
    args = parser.parse_args()
    window = BASELINES.get("sliding_window")
    print(f"{'steps':>7}{'cw-select ms/step':>19}{'sliding window ms/step':>24}{'ratio':>8}")
    for n in (int(x) for x in args.lengths.split(",")):
        select, base = per_step_ms(None, n), per_step_ms(window, n)
        print(f"{n:>7}{select:>19.2f}{base:>24.2f}{select / base:>7.2f}x", flush=True)


if __name__ == "__main__":
    main()
