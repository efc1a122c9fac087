"""What a parser returns: per-test statuses plus the runner's own totals, and how runs are merged."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from contextweaver.records import TestStatus

WHOLE_SUITE = "*"
"""A passed scope meaning every test the runner collected (a clean run given no path to narrow it)."""

_SEVERITY = {
    TestStatus.ERROR: 5,
    TestStatus.FAILED: 4,
    TestStatus.XPASS: 3,
    TestStatus.XFAIL: 2,
    TestStatus.SKIPPED: 1,
    TestStatus.PASSED: 0,
}


@dataclass
class TestReport:
    """One runner's results in an observation; several runs of the output merged (later wins per test)."""

    __test__ = False  # not a pytest test class

    runner: str
    tests: dict[str, TestStatus] = field(default_factory=dict)
    totals: dict[str, int] | None = None
    complete: bool = True
    failed_signal: bool = False
    passed_scopes: frozenset[str] = frozenset()
    """Files, directories or classes the runner showed as fully passing without naming each test (pytest
    -q, sympy), or WHOLE_SUITE."""
    runs: int = 1
    reason: str = ""
    """Why the runner failed when no test says it (a crashed test host, a runner stopped before its
    first test), as the report or the runner words it."""

    @property
    def failures(self) -> list[str]:
        return [test for test, status in self.tests.items() if status.is_failure]

    @property
    def has_failure(self) -> bool:
        totals = self.totals or {}
        return (
            self.failed_signal
            or bool(self.failures)
            or totals.get("failed", 0) > 0
            or totals.get("error", 0) > 0
        )

    def counts(self) -> dict[str, int]:
        """Per-status counts of the parsed tests (not the runner's totals)."""
        out: dict[str, int] = {}
        for status in self.tests.values():
            out[status.value] = out.get(status.value, 0) + 1
        return out


STATUS_KEY = {status: status.value for status in TestStatus}
"""A status's totals key by dict lookup (reading an enum's .value per test is several times slower)."""

_FAILING = frozenset((TestStatus.FAILED, TestStatus.ERROR))


def any_failure(statuses: Iterable[TestStatus]) -> bool:
    """Whether any status is a failure (a set test, not a property call per test)."""
    return not _FAILING.isdisjoint(statuses)


def closing_report(
    runner: str,
    tests: dict[str, TestStatus],
    totals: dict[str, int] | None,
    *,
    failed: bool = False,
    complete: bool = False,
    passed_scopes: frozenset[str] = frozenset(),
) -> TestReport:
    """The report of a runner whose closing totals line makes a run complete (or `complete`, a sign of
    its own); it failed when a test, the totals (failed or error counts) or `failed` says so."""
    return TestReport(
        runner=runner,
        tests=tests,
        totals=totals,
        complete=complete or totals is not None,
        failed_signal=failed
        or any_failure(tests.values())
        or bool(totals and (totals.get("failed") or totals.get("error"))),
        passed_scopes=passed_scopes,
    )


def record(tests: dict[str, TestStatus], test_id: str, status: TestStatus) -> None:
    """Within one run a repeated id keeps its most severe status, so a failure is never hidden."""
    previous = tests.setdefault(test_id, status)
    if previous is not status and _SEVERITY[status] >= _SEVERITY[previous]:
        tests[test_id] = status


def add_totals(into: dict[str, int] | None, more: dict[str, int] | None) -> dict[str, int] | None:
    """Sum the totals of two runs (None means the runner printed none)."""
    if more is None:
        return into
    if into is None:
        return dict(more)
    merged = dict(into)
    for key, value in more.items():
        merged[key] = merged.get(key, 0) + value
    return merged


def merge_reports(reports: Iterable[TestReport]) -> TestReport | None:
    """Merge runs in output order: later runs win per test, totals add up, any failure signal sticks."""
    merged: TestReport | None = None
    for report in reports:
        if merged is None:
            merged = TestReport(
                runner=report.runner,
                tests=dict(report.tests),
                totals=dict(report.totals) if report.totals is not None else None,
                complete=report.complete,
                failed_signal=report.failed_signal,
                passed_scopes=report.passed_scopes,
                runs=report.runs,
                reason=report.reason,
            )
            continue
        if report.runner not in merged.runner.split("+"):
            merged.runner = f"{merged.runner}+{report.runner}"
        for test_id, status in report.tests.items():
            merged.tests.pop(test_id, None)
            merged.tests[test_id] = status
        merged.totals = add_totals(merged.totals, report.totals)
        merged.complete = merged.complete and report.complete
        merged.failed_signal = merged.failed_signal or report.failed_signal
        merged.passed_scopes = merged.passed_scopes | report.passed_scopes
        merged.runs += report.runs
        merged.reason = merged.reason or report.reason
    return merged
