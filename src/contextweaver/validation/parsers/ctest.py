"""CTest: `1/3 Test #1: name ....   Passed` lines and `67% tests passed, 1 tests failed out of 3`."""

from __future__ import annotations

import re

from contextweaver.records import TestStatus
from contextweaver.validation.parsers.base import RunnerParser, bounded_int, framed
from contextweaver.validation.report import TestReport, add_totals, closing_report, record

_TEST = re.compile(r"\n *+\d++/\d++ ++Test ++#\d++: (\S++)([^\n]*+)")
"""The name, then dots, the outcome and the time, read with str methods (see _outcome)."""
_CLOSING = re.compile(r"\n(\d++)% tests passed, (\d++) tests? failed out of (\d++)")


def _outcome(rest: str) -> tuple[bool, str]:
    """` ......***Failed    0.02 sec` -> (True, "Failed"): whether CTest starred it, and its words."""
    body = rest.rstrip().removesuffix(" sec").rstrip("0123456789.").strip(" .")
    return body.startswith("***"), body.lstrip("*").strip()


def _status(stars: bool, outcome: str) -> TestStatus:
    """CTest's words: Passed; `***Skipped` and `***Not Run (Disabled)` did not run; every other starred
    outcome (Failed, Timeout, Exception, SegFault, Not Run for missing files) failed the run."""
    if not stars and outcome.startswith("Passed"):
        return TestStatus.PASSED
    if outcome.startswith("Skipped") or outcome.startswith("Not Run (Disabled)"):
        return TestStatus.SKIPPED
    return TestStatus.FAILED


class CtestParser(RunnerParser):
    """Ids are the test names CTest prints; the closing line counts failures over the tests run."""

    runner = "ctest"
    family = "ctest"
    command_pattern = re.compile(r"\bctest\b|\bmake test\b|\bninja test\b")
    failure_marker = re.compile(r"\n\d++% tests passed, [1-9]\d* tests? failed|\nThe following tests FAILED:")
    hints = ("tests passed, ", " Test #")
    marker_pattern = re.compile(r"\n(?:\d++% tests passed, \d|Test project /| *+\d++/\d++ +Test +#\d)")

    def parse(self, text: str, command: str = "") -> TestReport | None:
        text = framed(text)
        tests: dict[str, TestStatus] = {}
        for name, rest in _TEST.findall(text):
            if rest.endswith(" sec"):
                record(tests, name, _status(*_outcome(rest)))
        totals: dict[str, int] | None = None
        for _percent, failed, total in _CLOSING.findall(text):
            run = {"total": bounded_int(total), "failed": bounded_int(failed)}
            totals = add_totals(totals, run)
        if totals is None and not tests:
            return None
        return closing_report(self.runner, tests, totals)
