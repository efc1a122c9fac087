"""unittest's runner (and Django's, which prints the same): -v lines, FAIL:/ERROR: headers, Ran N, OK/FAILED."""

from __future__ import annotations

import re
from collections import deque

from contextweaver.records import TestStatus
from contextweaver.validation.parsers.base import AsciiFast, RunnerParser, bounded_int, framed
from contextweaver.validation.report import TestReport, any_failure, merge_reports, record

_RAN = re.compile(
    r"\nRan (\d+) tests? in [\d.]+s(?:[^\S\n]*+\n)++(?:[^\n]*\n){0,3}?(OK|FAILED)\b(?: \(([^)\n]*)\))?"
)
"""Blank lines after `Ran` are taken possessively: a megabyte of them is read once, not backtracked over."""
_RAN_ONLY = re.compile(r"\nRan (\d+) tests? in [\d.]+s(?=\n)")
_HEADER = re.compile(r"\n(FAIL|ERROR|UNEXPECTED SUCCESS): (\w+) \(([\w.]+)\)")
_VERBOSE = AsciiFast(
    r"\n(\w++) \(([\w.]++)\)(?: \([^)\n]*\))?(?:\n[^\n]*?)? \.\.\. "
    r"(ok|FAIL|ERROR|skipped|expected failure|unexpected success)\b"
)
"""One line per test in -v output: the ASCII variant on ASCII text (the common case) is much faster."""
_INTERLEAVED = AsciiFast(
    r"(\w++) \(([\w.]++)\)(?: \([^)\n]*\))? \.\.\. |(?:(?<=\n)|(?<=\.\.\. ))"
    r"(ok|FAIL|ERROR|skipped|expected failure|unexpected success)(?=\n| ')"
)
"""A test's start and a status word, apart: output printed by the test (or another test's start) came
between them. Runs one test at a time, so statuses follow starts in order (see _interleaved)."""
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


def _interleaved(text: str, start: int, end: int, tests: dict[str, TestStatus]) -> None:
    """Pair each status word with the oldest test started and not yet given one."""
    waiting: deque[str] = deque()
    for name, where, word in _INTERLEAVED.on(text).findall(text, start, end):
        if name:
            waiting.append(test_id(name, where))
        elif waiting:
            test = waiting.popleft()
            if test not in tests:
                record(tests, test, _STATUSES[word])


class UnittestParser(RunnerParser):
    """Runs end at `Ran N tests` + `OK`/`FAILED (...)`; tests printed after the last closer are incomplete."""

    passing_rows = (r"test\w* \([\w.]+\)[^\n]* \.\.\. ok",)
    runner = "unittest"
    family = "unittest"
    python_runner = True
    command_pattern = re.compile(r"\bunittest\b|\bnose2?\b")
    failure_marker = re.compile(r"\n(?:(?:FAIL|ERROR): \w++ \(|FAILED \((?:failures|errors)=)")
    hints = ("Ran ", "FAIL: ", "ERROR: ", " ... ")
    marker_pattern = re.compile(
        r"\n(?:Ran \d+ tests? in [\d.]+s(?=\n)|(?:FAIL|ERROR): \w+ \([\w.]+\)|\w++ \([\w.]+\) \.\.\. (?:ok|FAIL|ERROR)\b)"
    )

    def parse(self, text: str, command: str = "") -> TestReport | None:
        text = framed(text)
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
        statuses = _STATUSES
        verbose = _VERBOSE.on(text).findall(text, start, end) if text.find(" ... ", start, end) >= 0 else ()
        for name, where, word in verbose:
            test = where if where.endswith("." + name) else f"{where}.{name}"
            status = statuses[word]
            if tests.setdefault(test, status) is not status:  # seen before: the severer status stays
                record(tests, test, status)
        if text.count(" ... ", start, end) > len(tests):
            _interleaved(text, start, end, tests)
        headers = _HEADER.findall(text, start, end) if text.find(": ", start, end) >= 0 else ()
        for status, name, where in headers:
            record(tests, test_id(name, where), _STATUSES[status])
        if closer is None:
            ran = _RAN_ONLY.search(text, start, end)
            return TestReport(
                runner=self.runner,
                tests=tests,
                totals={"total": bounded_int(ran.group(1))} if ran else None,
                complete=False,
                failed_signal=any_failure(tests.values()),
            )
        totals = {"total": bounded_int(closer.group(1))}
        for item in (closer.group(3) or "").split(","):
            key, _, value = item.strip().partition("=")
            if key in _TOTAL_NAMES and value.isdigit():
                totals[_TOTAL_NAMES[key]] = bounded_int(value)
        failed = closer.group(2) == "FAILED"
        return TestReport(
            runner=self.runner,
            tests=tests,
            totals=totals,
            complete=True,
            failed_signal=failed or any_failure(tests.values()),
        )
