"""Where a context differs from the recorded one: which context, which message, the first differing bytes.

The record keeps one digest per strategy, run and budget (small); the contexts it was taken from are
rebuilt by replaying the same run with the source of the commit that recorded it (`git archive`, in a
subprocess), and compared with today's message by message. Only run when a digest differs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from io import BytesIO
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
RECORD = "tests/identity/context_digests.json"
Context = dict[str, Any]
"""One context as the digest hashes it: {"messages": [...], "tokens": n}."""

DUMP = """
import importlib, json, sys
try:
    import contextweaver.records
except ImportError:  # before types.py was renamed records.py
    sys.modules["contextweaver.records"] = importlib.import_module("contextweaver.types")
from tests.identity.digests import contexts, trajectory_of
name, run, budget, out = sys.argv[1:]
with open(out, "w", encoding="utf-8") as sink:
    for context in contexts(name, trajectory_of(run), None if budget == "None" else int(budget)):
        sink.write(json.dumps(context, ensure_ascii=False) + "\\n")
"""


def recorded_contexts(name: str, run: str, budget: int | None) -> Iterator[Context]:
    """The contexts as the commit that last wrote the record wove them."""
    commit = _git("log", "-1", "--format=%H", "--", RECORD).strip()
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "archive", commit, "src"], cwd=REPO, capture_output=True, check=True)
        with tarfile.open(fileobj=BytesIO(archive.stdout)) as tar:
            tar.extractall(tmp, filter="data")
        out = Path(tmp) / "contexts.jsonl"
        env = {"PYTHONPATH": f"{tmp}/src:{REPO}", "PATH": "/usr/bin:/bin"}
        subprocess.run([sys.executable, "-c", DUMP, name, run, str(budget), str(out)], cwd=REPO, env=env,
                       check=True)  # fmt: skip
        with out.open(encoding="utf-8") as lines:
            yield from (json.loads(line) for line in lines)


def first_difference(name: str, run: str, budget: int | None) -> str:
    """`cw at 8000 on synthetic-300: the context after step 41, message 7 (tool), byte 212: recorded '...'
    now '...'`, or why it could not be found."""
    from tests.identity.digests import contexts, trajectory_of

    where = f"{name} at {budget} on {run}"
    try:
        recorded = recorded_contexts(name, run, budget)
        for step, (now, then) in enumerate(
            zip(contexts(name, trajectory_of(run), budget), recorded, strict=False), 1
        ):
            if now != then:
                return f"{where}: the context after step {step}, {_difference(now, then)}"
    except (OSError, subprocess.CalledProcessError) as exc:
        return f"{where}: not localized ({exc})"
    return f"{where}: every context is as recorded but the digest differs (the number of contexts?)"


def _difference(now: Context, then: Context) -> str:
    pairs = list(zip(now["messages"], then["messages"], strict=False))
    index = next((i for i, (a, b) in enumerate(pairs) if a != b), len(pairs))
    if index == len(pairs):
        if len(now["messages"]) != len(then["messages"]):
            return f"{len(now['messages'])} messages (recorded {len(then['messages'])})"
        return f"tokens {now['tokens']} (recorded {then['tokens']})"
    a, b = (json.dumps(m, sort_keys=True, ensure_ascii=False) for m in pairs[index])
    byte = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    role = pairs[index][1].get("role", "?")
    start = max(0, byte - 30)
    return f"message {index} ({role}), character {byte}: recorded {b[start : byte + 50]!r}, now {a[start : byte + 50]!r}"


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=True).stdout
