"""Wall time of `ContextWeaver.add_step` on hostile steps: one character repeated, or blank lines.

Each input fills a step's observation (or its action, `--field action`) at 64 KB, 256 KB, 1 MB and 4 MB;
linear growth shows as a flat ms/MB column. A step slower than `--stop` seconds ends its row early.
Run: PYTHONPATH=src .venv/bin/python benchmarks/hostile_steps.py [--field observation] [--stop 20]
`--codex` times Codex code-mode scanning instead: unclosed calls repeated 2k / 20k / 200k times.
"""

from __future__ import annotations

import argparse
import time

from contextweaver.records import Step
from contextweaver.weaver import ContextWeaver

SIZES = (64_000, 256_000, 1_000_000, 4_000_000)
INPUTS = {**{repr(c): c for c in ".-/:_ a\n\t=*#"}, "blank lines": "  \n"}


def seconds(text: str, field: str) -> float:
    """One add_step on a fresh weaver holding a single earlier step (so the analyzer has a candidate)."""
    weaver = ContextWeaver()
    weaver.begin([{"role": "user", "content": "fix the failing test in src/app.py"}])
    weaver.add_step(Step(thought="look", action="cat src/app.py", observation="def main(): pass"))
    fields = {"thought": "run it", "action": "python -m pytest", "observation": "", field: text}
    start = time.perf_counter()
    weaver.add_step(Step(**fields))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--field", choices=("observation", "action", "thought"), default="observation")
    parser.add_argument("--stop", type=float, default=20.0)
    parser.add_argument("--codex", action="store_true", help="time Codex code-mode scanning instead")
    args = parser.parse_args()
    if args.codex:
        codex()
        return
    print(f"add_step seconds, hostile {args.field} (ms/MB in brackets)")
    print(f"{'input':<12}" + "".join(f"{f'{size // 1000} KB':>18}" for size in SIZES))
    for name, unit in INPUTS.items():
        cells = []
        for size in SIZES:
            took = seconds(unit * (size // len(unit)), args.field)
            cells.append(f"{took:>9.3f} ({took * 1e9 / size:>6.0f})")
            if took > args.stop:
                break
        print(f"{name:<12}" + "".join(cells))


def codex() -> None:
    """Seconds to scan a code-mode `exec` made of one unclosed call repeated: flat per 10k repeats is linear."""
    from contextweaver.formats.toolcalls import code_mode_actions

    print(f"{'input':<26}" + "".join(f"{f'{n // 1000}k':>12}" for n in (2_000, 20_000, 200_000)))
    for unit in ("tools.exec_command({", "tools.exec_command(['a', ", "tools.apply_patch(`"):
        cells = []
        for repeats in (2_000, 20_000, 200_000):
            start = time.perf_counter()
            code_mode_actions(unit * repeats)
            cells.append(f"{time.perf_counter() - start:>11.3f}s")
        print(f"{unit:<26}" + "".join(cells))


if __name__ == "__main__":
    main()
