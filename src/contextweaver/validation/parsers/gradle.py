"""Gradle's test task: `Class > method() FAILED` lines, `N tests completed, M failed`, `BUILD SUCCESSFUL|FAILED`."""

from __future__ import annotations

import re

from contextweaver.records import TestStatus
from contextweaver.validation.parsers.base import RunnerParser, bounded_int, framed
from contextweaver.validation.report import TestReport, add_totals, any_failure, record

_TEST = re.compile(r"\n([\w.$]++(?: > [^\n>]+?)*?) > ([^\n>]+?) (PASSED|FAILED|SKIPPED)(?=\n)")
"""`pkg.Class > method() FAILED` (nested classes add `> Inner`); PASSED and SKIPPED lines appear only when
the build's testLogging asks for them."""
_COMPLETED = re.compile(r"\n(\d++) tests? completed(?:, (\d++) failed)?(?:, (\d++) skipped)?(?=\n)")
_BUILD = re.compile(r"\nBUILD (SUCCESSFUL|FAILED) in ")
_TASK_FAILED = re.compile(r"\n> Task (:[\w:-]++) FAILED(?=\n)")
_STATUSES = {"PASSED": TestStatus.PASSED, "FAILED": TestStatus.FAILED, "SKIPPED": TestStatus.SKIPPED}


class GradleParser(RunnerParser):
    """A clean run prints no count by default: its verdict then rests on BUILD SUCCESSFUL and the test lines."""

    passing_rows = (r"\S+ > \S.* PASSED",)
    runner = "gradle"
    family = "gradle"
    command_pattern = re.compile(r"\bgradlew?\b")
    failure_marker = re.compile(r"\n\d++ tests? completed, [1-9]|\n[\w.$]++ > [^\n]+ FAILED(?=\n)")
    hints = ("> Task :", "tests completed")
    marker_pattern = re.compile(r"\n(?:> Task :[\w:-]*?[tT]est\b|\d++ tests? completed, )")

    def parse(self, text: str, command: str = "") -> TestReport | None:
        text = framed(text)
        tests: dict[str, TestStatus] = {}
        for owner, name, status in _TEST.findall(text):
            owner = owner.replace(" > ", ".")
            record(tests, f"{owner}.{name.removesuffix('()')}", _STATUSES[status])
        totals: dict[str, int] | None = None
        for ran, failed, skipped in _COMPLETED.findall(text):
            run = {
                "total": bounded_int(ran),
                "failed": bounded_int(failed or "0"),
                "skipped": bounded_int(skipped or "0"),
            }
            totals = add_totals(totals, run)
        builds = _BUILD.findall(text)
        for task in _TASK_FAILED.findall(text):
            if not task.lower().endswith("test"):
                record(tests, f"{task} [build failed]", TestStatus.ERROR)
        build_failed = "FAILED" in builds
        return TestReport(
            runner=self.runner,
            tests=tests,
            totals=totals,
            complete=bool(builds),
            failed_signal=build_failed or any_failure(tests.values()) or bool(totals and totals["failed"]),
        )
