"""Every context the strategy table weaves is the one recorded before the core's renovation, byte for
byte: each strategy, at no budget and 4k/8k/16k, on a 300-step synthetic run and on each dev run.

A change that means to alter contexts records the new digests (`python tests/identity/digests.py
--write`) in the same commit and says why in its message."""

from __future__ import annotations

import json

import pytest

from contextweaver.formats import load_trajectory
from contextweaver.strategies import TABLE
from tests.identity.digests import BUDGETS, DEV, RECORD, digest, synthetic_run
from tests.identity.localize import _difference, first_difference

RECORDED = json.loads(RECORD.read_text())
DEV_RUNS = sorted(p.name for p in DEV.glob("*.traj.json")) if DEV.is_dir() else []


def check(run: str, trajectory) -> None:  # noqa: ANN001
    differ = [
        (name, budget)
        for name in TABLE
        for budget in BUDGETS
        if digest(name, trajectory, budget) != RECORDED[f"{name}|{run}|{budget}"]
    ]
    if differ:  # the first one localized: which context, which message, the first differing bytes
        name, budget = differ[0]
        changed = ", ".join(f"{n} at {b}" for n, b in differ)
        pytest.fail(f"{run}: contexts changed for {changed}\nfirst: {first_difference(name, run, budget)}")


@pytest.mark.slow
def test_the_synthetic_run_weaves_the_recorded_contexts() -> None:
    check("synthetic-300", synthetic_run())


@pytest.mark.slow
@pytest.mark.parametrize(
    "run",
    DEV_RUNS or [pytest.param("", marks=pytest.mark.skip(reason="../shared/data is absent: no dev runs"))],
)
def test_each_dev_run_weaves_the_recorded_contexts(run: str) -> None:
    check(run, load_trajectory(DEV / run))


def test_a_changed_context_is_seen() -> None:
    """The digest covers the messages: the same run with one output changed digests differently."""
    trajectory = synthetic_run(12)
    before = digest("full", trajectory, None)
    trajectory.steps[3] = type(trajectory.steps[3])(
        trajectory.steps[3].thought, trajectory.steps[3].action, "changed"
    )
    assert digest("full", trajectory, None) != before


def test_a_difference_is_localized_to_its_message_and_bytes() -> None:
    then = {
        "messages": [{"role": "system", "content": "s"}, {"role": "tool", "content": "line one\nline two"}],
        "tokens": 9,
    }
    now = {
        "messages": [{"role": "system", "content": "s"}, {"role": "tool", "content": "line one\nline 2"}],
        "tokens": 9,
    }
    said = _difference(now, then)
    assert said.startswith("message 1 (tool), character ") and "line two" in said and "line 2" in said
