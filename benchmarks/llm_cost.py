"""Memory-model cost per step: paper mode (three calls, listwise over all candidates), hybrid, fused.

Replays recorded mini-swe-agent runs with the deterministic fake model (real o200k token counts) and
prints LLM calls and prompt tokens per step at steps 10, 50 and 100. Runs shorter than 100 steps are
extended by repeating their steps (a synthetic long trace). Usage:

    .venv/bin/python benchmarks/llm_cost.py [--limit 8] [--data DIR]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from pathlib import Path

from contextweaver.config import WeaverConfig
from contextweaver.formats import load_trajectory
from contextweaver.models.fake import FakeModel
from contextweaver.weaver import ContextWeaver

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trajectories" / "mini-swe-agent"
MODES = {
    "paper (llm, 3 calls)": {"analyzer": "llm", "summarizer": "llm", "llm_mode": "three_call"},
    "hybrid (C=12, 3 calls)": {"analyzer": "hybrid", "summarizer": "llm", "llm_mode": "three_call"},
    "fused (C=12, 1 call)": {"analyzer": "hybrid", "llm_mode": "fused"},
}
AT = (10, 50, 100)


def replay(path: Path, settings: dict[str, str], steps: int) -> dict[int, tuple[int, int]]:
    """Calls and prompt tokens of the memory model at each step of one (extended) run."""
    trajectory = load_trajectory(path)
    model = FakeModel()
    weaver = ContextWeaver(WeaverConfig.model_validate(settings), model=model)
    weaver.begin(trajectory.root)
    for step in itertools.islice(itertools.cycle(trajectory.steps), steps):
        weaver.add_step(step)
    return {k: (t.calls, t.prompt_tokens) for k, t in model.usage.per_step.items()}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--limit", type=int, default=8, help="number of recorded runs (sorted by name)")
    args = parser.parse_args()
    files = sorted(args.data.glob("*.traj.json"))[: args.limit]
    if not files:
        print(f"no trajectories under {args.data}", file=sys.stderr)
        return 1
    start = time.monotonic()
    header = ["mode"] + [f"calls@{k}" for k in AT] + [f"prompt tok@{k}" for k in AT]
    rows = []
    for label, settings in MODES.items():
        runs = [replay(path, settings, max(AT)) for path in files]
        calls = [statistics.mean(run.get(k, (0, 0))[0] for run in runs) for k in AT]
        tokens = [statistics.mean(run.get(k, (0, 0))[1] for run in runs) for k in AT]
        rows.append([label] + [f"{c:.1f}" for c in calls] + [f"{t:,.0f}" for t in tokens])
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, ["-" * w for w in widths], *rows]:
        print(" | ".join(str(cell).ljust(w) for cell, w in zip(row, widths, strict=True)))
    print(f"\n{len(files)} recorded runs, each extended to {max(AT)} steps; fake model, o200k token counts; "
          f"{time.monotonic() - start:.0f} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
