"""unittest's runner (and Django's, which prints the same): -v lines, FAIL:/ERROR: headers, Ran N, OK/FAILED."""

from __future__ import annotations

import re

from contextweaver.types import TestStatus
from contextweaver.validation.parsers.base import RunnerParser
from contextweaver.validation.report import TestReport, merge_reports, record

_RAN = re.compile(
    r"^Ran (\d+) tests? in [\d.]+s\s*\n+(?:[^\n]*\n){0,3}?(OK|FAILED)\b(?: \(([^)\n]*)\))?", re.M
)
_RAN_ONLY = re.compile(r"^Ran (\d+) tests? in [\d.]+s$", re.M)
_HEADER = re.compile(r"^(FAIL|ERROR|UNEXPECTED SUCCESS): (\w+) \(([\w.]+)\)", re.M)
_VERBOSE = re.compile(
    r"^(\w+) \(([\w.]+)\)(?: \([^)\n]*\))?(?:\n[^\n]*?)? \.\.\. "
    r"(ok|FAIL|ERROR|skipped|expected failure|unexpected success)\b",
    re.M,
)
_STATUSES = {
    "ok": TestStatus.PASSED,
    "FAIL": TestStatus.FAILED,
    "ERROR": TestStatus.ERROR,
    "skipped": TestStatus.SKIPPED,
    "expected failure": TestStatus.XFAIL,
    "unexpected success": TestStatus.XPASS,
    "UNEXPECTED SUCCESS": TestStatus.XPASS,
}
_TOTAL_NAMES = {
    "failures": "failed",
    "errors": "error",
    "skipped": "skipped",
    "expected failures": "xfail",
    "unexpected successes": "xpass",
}


def test_id(name: str, where: str) -> str:
    """`test_a (pkg.Class)` and Python 3.11's `test_a (pkg.Class.test_a)` both become pkg.Class.test_a."""
    return where if where.endswith("." + name) else f"{where}.{name}"


class UnittestParser(RunnerParser):
    """Runs end at `Ran N tests` + `OK`/`FAILED (...)`; tests printed after the last closer are incomplete."""

    runner = "unittest"
    family = "unittest"
    command_pattern = re.compile(r"\bunittest\b|\bnose2?\b")
    hints = ("Ran ", " ... ", "FAIL: ", "ERROR: ")
    marker_pattern = re.compile(
        r"^Ran \d+ tests? in [\d.]+s$|^(?:FAIL|ERROR): \w+ \([\w.]+\)|^\w+ \([\w.]+\) \.\.\. (?:ok|FAIL|ERROR)\b",
        re.M,
    )

    def parse(self, text: str, command: str = "") -> TestReport | None:
        closers = list(_RAN.finditer(text))
        reports: list[TestReport] = []
        start = 0
        for closer in closers:
            reports.append(self._run(text, start, closer.end(), closer))
            start = closer.end()
        tail = self._run(text, start, len(text), None)
        if tail.tests or (not closers and _RAN_ONLY.search(text, start)):
            reports.append(tail)
        return merge_reports(reports)

    def _run(self, text: str, start: int, end: int, closer: re.Match[str] | None) -> TestReport:
        tests: dict[str, TestStatus] = {}
        for match in _VERBOSE.finditer(text, start, end):
            record(tests, test_id(match.group(1), match.group(2)), _STATUSES[match.group(3)])
        for match in _HEADER.finditer(text, start, end):
            record(tests, test_id(match.group(2), match.group(3)), _STATUSES[match.group(1)])
        if closer is None:
            return TestReport(
                runner=self.runner,
                tests=tests,
                totals=None,
                complete=False,
                failed_signal=any(status.is_failure for status in tests.values()),
            )
        totals = {"total": int(closer.group(1))}
        for item in (closer.group(3) or "").split(","):
            key, _, value = item.strip().partition("=")
            if key in _TOTAL_NAMES and value.isdigit():
                totals[_TOTAL_NAMES[key]] = int(value)
        failed = closer.group(2) == "FAILED"
        return TestReport(
            runner=self.runner,
            tests=tests,
            totals=totals,
            complete=True,
            failed_signal=failed or any(status.is_failure for status in tests.values()),
        )
