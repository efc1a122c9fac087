"""Minitest: numbered `Failure:`/`Error:`/`Skipped:` blocks naming `Class#test`, -v lines, `N runs, .. skips`."""

from __future__ import annotations

import re

from contextweaver.records import TestStatus
from contextweaver.validation.parsers.base import RunnerParser, bounded_int, framed
from contextweaver.validation.report import TestReport, add_totals, closing_report, record

_SUMMARY = re.compile(
    r"\n(\d++) (?:runs|tests), \d++ assertions, (\d++) failures, (\d++) errors, (\d++) skips"
)
_BLOCK = re.compile(r"\n +\d++\) (Failure|Error|Skipped):\n([\w:]++#\S+?)(?: \[[^\]\n]*+\])?:?(?=\n)")
_VERBOSE = re.compile(r"\n([\w:]++#\w\S*+) = [\d.]++ s = ([.FES])(?=\n)")
_STATUSES = {
    "Failure": TestStatus.FAILED,
    "Error": TestStatus.ERROR,
    "Skipped": TestStatus.SKIPPED,
    ".": TestStatus.PASSED,
    "F": TestStatus.FAILED,
    "E": TestStatus.ERROR,
    "S": TestStatus.SKIPPED,
}


class MinitestParser(RunnerParser):
    """Ids are `Class#test_name` as Minitest prints them."""

    runner = "minitest"
    family = "minitest"
    command_pattern = re.compile(r"\brake test\b|\bbin/rails test\b|\bruby -I\w* test\b|\bm?test\b")
    failure_marker = re.compile(
        r"\n\d++ (?:runs|tests), \d++ assertions, (?:[1-9]\d* failures|\d++ failures, [1-9])"
    )
    hints = (" assertions, ",)
    marker_pattern = re.compile(r"\n\d++ (?:runs|tests), \d++ assertions, \d++ failures, \d++ errors")

    def parse(self, text: str, command: str = "") -> TestReport | None:
        text = framed(text)
        tests: dict[str, TestStatus] = {}
        for test, mark in _VERBOSE.findall(text):
            record(tests, test, _STATUSES[mark])
        for kind, test in _BLOCK.findall(text):
            record(tests, test, _STATUSES[kind])
        totals: dict[str, int] | None = None
        for runs, failures, errors, skips in _SUMMARY.findall(text):
            run = {
                "total": bounded_int(runs),
                "failed": bounded_int(failures),
                "error": bounded_int(errors),
                "skipped": bounded_int(skips),
            }
            run["passed"] = run["total"] - run["failed"] - run["error"] - run["skipped"]
            totals = add_totals(totals, run)
        if totals is None and not tests:
            return None
        return closing_report(self.runner, tests, totals)
