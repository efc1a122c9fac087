"""The evaluator's truth of which files an action changes (`eval/edits.py`), checked two ways.

    python benchmarks/edit_truth.py agree --split validation   # evaluator vs the note's facts, SWE-agent 0.x edits
    python benchmarks/edit_truth.py sample --split validation  # a seeded sample to label by hand

`agree` counts, on the SWE-agent 0.x sets (nebius, java), the (step, file) pairs of `open`/`create`/`edit`
steps that the evaluator (the documented commands, followed across steps) and the weaver's facts (the
`[File: ...]` header and `File updated.`, `nodes/open_file.py`) each find. `sample` prints 10 write-like steps
per set (action, output and the evaluator's files) for a person to check.
"""

from __future__ import annotations

import argparse
import random
import re
import sys

from frontier import runs_of

from contextweaver.eval.edits import find_copies, find_deletions, trajectory_edits
from contextweaver.nodes.extract import make_node
from contextweaver.nodes.open_file import OpenFile

SWE_COMMAND = re.compile(r"\s*(?:open|create|edit)\b")
WRITE_LIKE = re.compile(
    r"^\s*(edit|create)\b|sed\s+-i|>|\btee\b|\bcp\b|\bmv\b|\brm\b|str_replace_editor|<<", re.M
)


def same(a: str, b: str) -> bool:
    a, b = a.strip("./"), b.strip("./")
    return a.endswith(b) or b.endswith(a)


def agree(split: str) -> int:
    for name in ("nebius", "java"):
        both = evaluator_only = note_only = 0
        for run in runs_of(name, split):
            follow = OpenFile()
            for index, (step, edits) in enumerate(
                zip(run.steps, trajectory_edits(run), strict=True), start=1
            ):
                node = make_node(index, step)
                follow.follow(node)
                if not SWE_COMMAND.match(step.action):
                    continue
                truth, noted = {e.path for e in edits}, set(node.facts.edited_files)
                both += sum(any(same(p, q) for q in noted) for p in truth)
                evaluator_only += sum(not any(same(p, q) for q in noted) for p in truth)
                note_only += sum(not any(same(p, q) for p in truth) for q in noted)
        total = both + evaluator_only + note_only
        print(
            f"{name} {split}: {both} agree, {evaluator_only} evaluator only, {note_only} note only "
            f"({both / max(1, total):.4f})"
        )
    return 0


def sample(split: str) -> int:
    rng = random.Random(47)
    for name in ("nebius", "java", "lm32b", "gemini"):
        candidates = [
            (step, edits)
            for run in runs_of(name, split)
            for step, edits in zip(run.steps, trajectory_edits(run), strict=True)
            if WRITE_LIKE.search(step.action)
        ]
        for step, edits in rng.sample(candidates, min(10, len(candidates))):
            truth = sorted(
                {e.path for e in edits} | set(find_deletions(step.action)) | set(find_copies(step.action))
            )
            print(
                f"[{name}] action: {step.action.strip()[:300]!r}\n  output: {step.observation.strip()[:160]!r}\n"
                f"  evaluator: {truth}"
            )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("agree", "sample"))
    parser.add_argument("--split", default="validation")
    args = parser.parse_args(argv)
    if not runs_of("nebius", args.split):
        print("no runs: the training sets are absent (see scripts/fetch_data.py)", file=sys.stderr)
        return 2
    return agree(args.split) if args.what == "agree" else sample(args.split)


if __name__ == "__main__":
    sys.exit(main())
