"""Digests of every context the strategy table weaves, for the byte-identity check of refactorings.

For each strategy, run and budget, the contexts after every step are hashed in order (messages as
canonical JSON, plus the token count) into one sha256. The runs are the dev set (when `../shared/data`
is present) and a 300-step synthetic run built here, so the check also runs without the shared data.

    python tests/identity/digests.py --write     # record tests/identity/context_digests.json
    python tests/identity/digests.py             # compare with it, print the differences
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from contextweaver.eval.replay import replay_steps
from contextweaver.formats import load_trajectory
from contextweaver.formats.base import Trajectory
from contextweaver.records import Step
from contextweaver.strategies import TABLE, build_strategy
from contextweaver.weaving.budget import BudgetError

HERE = Path(__file__).resolve().parent
RECORD = HERE / "context_digests.json"
DEV = HERE.parents[1].parent / "shared" / "data" / "trajectories" / "mini-swe-agent"
BUDGETS = (None, 4000, 8000, 16000)
ROOT = [
    {"role": "system", "content": "You are a coding agent. One bash command per reply."},
    {"role": "user", "content": "Fix the helper calls in pkg so that tests/test_helpers.py passes."},
]


def synthetic_run(n: int = 300) -> Trajectory:
    """Reads, edits (sed, heredocs), searches and test runs with named failures over 30 files: enough
    structure for every selector, the tracker and the working-state note to act on."""
    rng = random.Random(23)
    steps = []
    for i in range(1, n + 1):
        path = f"pkg/module_{rng.randrange(30)}.py"
        kind = rng.random()
        if kind < 0.35:
            body = "\n".join(
                f"{k:>4}  def func_{k}(arg): return helper_{rng.randrange(200)}(arg)" for k in range(1, 41)
            )
            steps.append(Step(f"Where is helper_{rng.randrange(200)} used?", f"nl -ba {path}", body))
        elif kind < 0.5:
            hits = "\n".join(
                f"pkg/module_{rng.randrange(30)}.py:{rng.randrange(1, 41)}:helper_{i}" for _ in range(4)
            )
            steps.append(Step("Search.", f"grep -rn helper_{i} pkg/", hits))
        elif kind < 0.7:
            steps.append(Step(f"Patch {path}.", f"sed -i 's/helper_{i}/helper_{i + 1}/' {path}", ""))
        elif kind < 0.78:
            steps.append(
                Step("Write a script.", f"cat > check_{i}.py <<'EOF'\nimport pkg\nprint(pkg)\nEOF", "")
            )
        else:
            failing = [
                f"tests/test_helpers.py::test_case_{rng.randrange(12)}" for _ in range(rng.randrange(3))
            ]
            lines = [f"FAILED {name} - AssertionError" for name in failing]
            summary = (
                f"{len(failing)} failed, {40 - len(failing)} passed in 0.91s"
                if failing
                else "40 passed in 0.88s"
            )
            steps.append(Step("Run the tests.", "python -m pytest -q tests/", "\n".join([*lines, summary])))
    return Trajectory(root=ROOT, steps=steps, source="synthetic-300", meta={"instance_id": "synthetic-300"})


def runs() -> Iterator[tuple[str, Trajectory]]:
    yield "synthetic-300", synthetic_run()
    if DEV.is_dir():
        for path in sorted(DEV.glob("*.traj.json")):
            yield path.name, load_trajectory(path)


def contexts(name: str, trajectory: Trajectory, budget: int | None) -> Iterator[dict[str, Any]]:
    """Every context of one replay as the digest hashes it (a fresh strategy per budget: the lazy state is
    per budget), ending with the refusal when the budget cannot hold a step (the agent's run ends there)."""
    built = build_strategy(name, seed=0)
    refused: dict[int | None, BudgetError] = {}
    for replayed in replay_steps(trajectory, built.strategy, (budget,), refused=refused):
        if refused:
            yield {"refused": str(refused[budget])}
            return
        yield {"messages": replayed.context.messages, "tokens": replayed.context.tokens}


def digest(name: str, trajectory: Trajectory, budget: int | None) -> str:
    """One sha256 over every context of one replay."""
    hasher = hashlib.sha256()
    for context in contexts(name, trajectory, budget):
        if "refused" in context:
            hasher.update(f"refused|{context['refused']}".encode())
            break
        hasher.update(json.dumps(context["messages"], sort_keys=True, ensure_ascii=False).encode())
        hasher.update(f"|{context['tokens']}|".encode())
    return hasher.hexdigest()[:16]


def trajectory_of(run: str) -> Trajectory:
    """A run by its name in the record: the synthetic one or a dev run."""
    return synthetic_run() if run == "synthetic-300" else load_trajectory(DEV / run)


def compute(only_synthetic: bool = False) -> dict[str, str]:
    out = {}
    for run, trajectory in runs():
        if only_synthetic and run != "synthetic-300":
            continue
        for name in TABLE:
            for budget in BUDGETS:
                out[f"{name}|{run}|{budget}"] = digest(name, trajectory, budget)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--write", action="store_true", help="record the digests instead of comparing")
    parser.add_argument("--synthetic", action="store_true", help="only the synthetic run")
    args = parser.parse_args()
    found = compute(args.synthetic)
    if args.write:
        RECORD.write_text(json.dumps(found, indent=0, sort_keys=True) + "\n")
        print(f"{len(found)} digests written to {RECORD}")
        return
    recorded = json.loads(RECORD.read_text())
    missing = sorted(k for k in found if k not in recorded)
    if missing:
        sys.exit(f"{len(missing)} digests were never recorded (e.g. {missing[0]}): run with --write first")
    differ = sorted(k for k in found if recorded[k] != found[k])
    for key in differ:
        print(f"differs: {key}")
    if differ:
        from tests.identity.localize import first_difference

        name, run, budget = differ[0].split("|")
        print("first:", first_difference(name, run, None if budget == "None" else int(budget)))
    print(f"{len(found) - len(differ)} of {len(found)} identical")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
