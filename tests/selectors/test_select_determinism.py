"""The per-step selection is deterministic: the same run gives the same contexts whatever the hash seed.

Python randomises string hashing per process, so anything that iterates a set of words and sums floats
in that order can break a tie differently from one process to the next. The run below is one where it
did (a real dev run, read in place; skipped when ../shared/data is absent).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import MINI_SWE_AGENT
from tests.shared_data import absent

RUN = MINI_SWE_AGENT / "sympy__sympy-11618.traj.json"
DIGEST = """
import hashlib, json, sys
from contextweaver.formats import load_trajectory
from contextweaver.strategies import build_strategy
run = load_trajectory(sys.argv[1])
strategy = build_strategy("cw-select").strategy
strategy.begin(list(run.root))
digest = hashlib.sha256()
for step in run.steps:
    strategy.add_step(step)
    digest.update(json.dumps(strategy.context().messages, sort_keys=True).encode())
print(digest.hexdigest())
"""


def _digest(seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    src = str(Path(__file__).resolve().parents[2] / "src")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH", "")) if p)
    done = subprocess.run(
        [sys.executable, "-c", DIGEST, str(RUN)], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@pytest.mark.slow
def test_cw_select_contexts_do_not_depend_on_the_hash_seed() -> None:
    if not RUN.exists():
        pytest.skip(absent(RUN))
    assert _digest("0") == _digest("1")
