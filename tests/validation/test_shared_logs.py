"""The real logs in ../shared/data: the accuracy script's sets stay at 98% or better, and the test runs
agents saw in the held-out training runs at 99% or better."""

import importlib.util
import sys
from pathlib import Path

import pytest

from tests.shared_data import absent

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / ".." / "shared" / "data" / "test_logs"
pytestmark = [pytest.mark.data, pytest.mark.skipif(not DATA.exists(), reason=absent(DATA))]


def _accuracy_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "parser_accuracy", ROOT / "benchmarks" / "parser_accuracy.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["parser_accuracy"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("set_name", ["agent-observations", "go-junit-report", "gotestsum", "jest-snapshots"])
def test_runner_sets_are_at_least_98_percent_exact(set_name: str) -> None:
    accuracy = _accuracy_module()
    tally = accuracy.Tally()
    for case in accuracy.SETS[set_name](DATA):
        accuracy.score(case, tally)
    assert tally.totals_n + tally.tests_n > 0
    assert tally.totals_ok >= 0.98 * tally.totals_n, tally.misses
    assert tally.tests_ok >= 0.98 * tally.tests_n, tally.misses


def test_agent_observation_failures_are_never_labelled_passed() -> None:
    accuracy = _accuracy_module()
    from contextweaver.records import ValidationStatus
    from contextweaver.validation import TestTracker

    for case in accuracy.agent_observation_cases(DATA):
        status = TestTracker().observe(1, case.command, case.text).status
        if case.totals and (case.totals.get("failed") or case.totals.get("error")):
            assert status is ValidationStatus.FAILED, case.name


def test_every_dorny_report_is_at_least_98_percent_exact() -> None:
    """Per report format, not pooled: a small format (dart, rspec, junit4) cannot hide behind a big one."""
    accuracy = _accuracy_module()
    tallies: dict[str, object] = {}
    for case in accuracy.junit_dorny_cases(DATA):
        tally = tallies.setdefault(case.runner, accuracy.Tally())
        accuracy.score(case, tally)
    assert len(tallies) >= 25
    for runner, tally in tallies.items():
        assert tally.totals_ok >= 0.98 * tally.totals_n, (runner, tally.misses)  # type: ignore[attr-defined]
        assert tally.tests_ok >= 0.98 * tally.tests_n, (runner, tally.misses)  # type: ignore[attr-defined]


def test_held_out_agent_test_runs_are_at_least_99_percent_right() -> None:
    if not (DATA.parent / "train").exists():
        pytest.skip(absent(DATA.parent / "train"))
    accuracy = _accuracy_module()
    tally = accuracy.Tally()
    for case in accuracy.SETS["agent-runs-validation"](DATA):
        accuracy.score(case, tally)
    assert tally.verdict_n >= 100
    assert tally.verdict_ok >= 0.99 * tally.verdict_n, tally.misses
    assert tally.totals_ok >= 0.99 * tally.totals_n, tally.misses
