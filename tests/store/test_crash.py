"""Crash safety: the writer is SIGKILLed mid-write, again and again; every acknowledged step survives
and the resumed graph is identical to the one acknowledged and to an uninterrupted run's."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from contextweaver.store import Session, open_store
from contextweaver.store.replay import signature
from tests.store.helpers import crash_steps

WRITER = Path(__file__).with_name("crash_writer.py")
TOTAL = 45


def as_json(value: Any) -> Any:
    return json.loads(json.dumps(value))


# Each writer runs with its own hash seed: the graph must not depend on it
# (tests/analyzers/test_heuristic_determinism.py).
ENV = dict(os.environ)


def start_writer(location: str, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(WRITER), location, "run", str(TOTAL), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
    )  # fmt: skip


def reference(total: int = TOTAL) -> list[Any]:
    """The graph of the same steps added in one uninterrupted run (in a process with the same seed).

    Labels of earlier steps change when later steps supersede them, so compare equal step counts."""
    out = subprocess.run([sys.executable, str(WRITER), "--reference", str(total)], env=ENV,
                         capture_output=True, text=True, check=True)  # fmt: skip
    return list(json.loads(out.stdout))


@pytest.mark.slow
def test_sigkill_mid_write_loses_no_acknowledged_step(store_location: str) -> None:
    rng = random.Random(20260423)
    acked: dict[int, Any] = {}
    kills = 0
    while True:
        writer = start_writer(store_location)
        assert writer.stdout is not None
        header = json.loads(writer.stdout.readline() or "{}")
        assert header.get("resumed", -1) >= max(acked, default=0), (
            writer.stderr.read() if writer.stderr else ""
        )
        wait_for = rng.randint(2, 8)
        done = False
        for _ in range(wait_for):
            line = writer.stdout.readline()
            if not line:
                done = True
                break
            ack = json.loads(line)
            acked[ack["ack"]] = ack["node"]
        if done or max(acked) >= TOTAL:
            writer.wait(30)
            break
        writer.send_signal(signal.SIGKILL)  # while it is adding the next step
        writer.wait(30)
        for line in writer.stdout.read().splitlines():  # acknowledged before the kill, read only now
            ack = json.loads(line)
            acked[ack["ack"]] = ack["node"]
        if writer.returncode == 0 and max(acked) >= TOTAL:  # it wrote the last step before the signal came
            break
        assert writer.returncode == -signal.SIGKILL
        kills += 1
    assert kills >= 4
    store = open_store(store_location)
    stored = store.steps("run")
    _, steps = crash_steps(TOTAL)
    assert [s.step for s in stored] == steps, "every acknowledged step, each once, in order"
    resumed = Session.open(store, "run")
    assert resumed.notes == []
    rebuilt = as_json(signature(resumed.graph))
    fixed = (0, 1, 4, 5)  # index, parents, summaries: final at acknowledgement (statuses may change later)
    assert all([rebuilt[i - 1][f] for f in fixed] == [node[f] for f in fixed] for i, node in acked.items())
    assert rebuilt == reference()
    store.close()


@pytest.mark.slow
def test_sigkill_inside_the_commit_of_a_step(store_location: str) -> None:
    writer = start_writer(store_location, "--die-in-commit", "17")
    out, _ = writer.communicate(timeout=120)
    assert writer.returncode == -signal.SIGKILL
    acks = [json.loads(line)["ack"] for line in out.splitlines()[1:]]
    assert acks == list(range(1, 17)), "step 17 was never acknowledged"
    store = open_store(store_location)
    assert len(store.steps("run")) == 16  # the step row of 17 went with its transaction
    resumed = Session.open(store, "run")
    assert resumed.notes == []
    assert as_json(signature(resumed.graph)) == reference(16)
    store.close()
    finish = start_writer(store_location)
    finish.communicate(timeout=120)
    assert finish.returncode == 0
    final = open_store(store_location)
    assert as_json(signature(Session.open(final, "run").graph)) == reference()
    final.close()
