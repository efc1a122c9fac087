"""Parse time of hostile observations (tests/validation/adversarial.py), in ms per MB.

Every runner anchor followed by a long filler, openers that never close, deep nesting, CSI escapes and
carriage returns, at about 1 MB each; a shape slower than 2 s at 256 KB is reported without the 1 MB run.
Run: PYTHONPATH=src .venv/bin/python benchmarks/parser_adversarial.py [--size 1000000] [--top 15]
"""

from __future__ import annotations

import argparse
import time

from tests.validation.adversarial import shapes

from contextweaver.validation import parse_observation


def best_ms(text: str, runs: int = 3) -> float:
    """Best CPU milliseconds (steadier than wall time on a shared machine)."""
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        parse_observation(text, "")
        best = min(best, time.process_time() - start)
    return best * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    rows = []
    for (name, probe), (_, text) in zip(shapes(args.size // 4), shapes(args.size), strict=True):
        probe_ms = best_ms(probe, runs=1)
        if probe_ms > 2000:
            rows.append((probe_ms * 1e6 / len(probe), f"{name} (at {len(probe) / 1e6:.2f} MB)"))
            continue
        rows.append((best_ms(text) * 1e6 / len(text), name))
    rows.sort(reverse=True)
    print(f"{len(rows)} shapes of about {args.size / 1e6:.1f} MB; the slowest:")
    print(f"{'ms/MB':>8}  shape")
    for rate, name in rows[: args.top]:
        print(f"{rate:8.1f}  {name}")
    print(f"worst: {rows[0][0]:.1f} ms/MB; median: {rows[len(rows) // 2][0]:.1f} ms/MB")


if __name__ == "__main__":
    main()
