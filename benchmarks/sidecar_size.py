"""Size of the `<name>.contexts.jsonl` sidecar against the trajectory it describes, on real runs.

Replays each recorded mini-swe-agent run the way ContextWeaverAgent sees it (the message list before
every model query), saves every woven context with the integration's own log (references to the
trajectory's messages plus what was cut), checks that each rebuilds exactly, and compares the file
with the trajectory and with storing every context's messages whole (the earlier format).

    python benchmarks/sidecar_size.py [--runs ../shared/data/trajectories/mini-swe-agent] [--budget 8000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import data_absent

from contextweaver.integrations.contexts import read_contexts
from contextweaver.integrations.feed import ChatFeed
from contextweaver.integrations.record import ContextLog
from contextweaver.integrations.settings import WeavingSettings

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_RUNS = ROOT.parent / "shared" / "data" / "trajectories" / "mini-swe-agent"


def measure(trajectory: Path, settings: WeavingSettings, out: Path) -> dict[str, float]:
    messages = json.loads(trajectory.read_text(encoding="utf-8"))["messages"]
    feed, log = ChatFeed(settings), ContextLog()
    whole = 0
    sent = []
    for end in (i for i, m in enumerate(messages) if m.get("role") == "assistant"):
        feed.update(messages[:end])
        context = feed.context()
        log.add(context, 0.0, feed.sources(context))
        whole += len(json.dumps({"messages": context.messages}, ensure_ascii=False)) + 1
        sent.append(context.messages)
    sidecar = out / f"{trajectory.stem}.contexts.jsonl"
    log.flush(sidecar)
    rebuilt = [c["messages"] for c in read_contexts(sidecar, messages)]
    assert rebuilt == sent, f"{trajectory.name}: a context does not rebuild exactly"
    size = trajectory.stat().st_size
    return {"ratio": sidecar.stat().st_size / size, "whole_ratio": whole / size, "queries": len(sent)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, default=DEFAULT_RUNS)
    parser.add_argument("--budget", type=int, default=8000)
    args = parser.parse_args()
    runs = sorted(args.runs.glob("*.traj.json"))
    if not runs:
        raise SystemExit(
            data_absent.report([args.runs]) if not args.runs.exists() else f"no *.traj.json under {args.runs}"
        )
    setups = {
        "cw-perstep (W=5, no budget)": WeavingSettings(strategy="cw-perstep"),
        f"cw-perstep, budget {args.budget}": WeavingSettings(strategy="cw-perstep", budget=args.budget),
        f"cw (lazy), budget {args.budget}": WeavingSettings(strategy="cw", budget=args.budget),
        "sliding_window n=5": WeavingSettings(strategy="sliding_window", window=5),
    }
    print(f"{len(runs)} runs; sidecar size / trajectory size (mean, max) and storing messages whole (mean)")
    with tempfile.TemporaryDirectory() as tmp:
        for name, settings in setups.items():
            started = time.perf_counter()
            rows = [measure(run, settings, Path(tmp)) for run in runs]
            ratios = [r["ratio"] for r in rows]
            print(
                f"{name:32s} sidecar {statistics.fmean(ratios):5.2f}x (max {max(ratios):4.2f}x)   "
                f"whole {statistics.fmean(r['whole_ratio'] for r in rows):6.2f}x   "
                f"{time.perf_counter() - started:5.1f} s"
            )


if __name__ == "__main__":
    main()
