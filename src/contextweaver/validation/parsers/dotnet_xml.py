"""NUnit (2 and 3), Visual Studio TRX and xUnit.net XML reports printed or cat'ed by an action."""

from __future__ import annotations

import re

from contextweaver.types import TestStatus
from contextweaver.validation.parsers.base import RunnerParser
from contextweaver.validation.parsers.junit_xml import attributes
from contextweaver.validation.report import TestReport, record

_CASE = re.compile(r"<(test-case|UnitTestResult|test)(?=[\s/>])([^>]*?)/?>")
_ROOT_CLOSE = re.compile(r"</(?:test-run|test-results|TestRun|assemblies|assembly)>")
_OUTCOMES = {
    "passed": TestStatus.PASSED,
    "success": TestStatus.PASSED,
    "pass": TestStatus.PASSED,
    "failed": TestStatus.FAILED,
    "failure": TestStatus.FAILED,
    "fail": TestStatus.FAILED,
    "error": TestStatus.ERROR,
    "timeout": TestStatus.ERROR,
    "aborted": TestStatus.ERROR,
    "skipped": TestStatus.SKIPPED,
    "skip": TestStatus.SKIPPED,
    "ignored": TestStatus.SKIPPED,
    "notexecuted": TestStatus.SKIPPED,
    "notrunnable": TestStatus.SKIPPED,
    "inconclusive": TestStatus.SKIPPED,
    "pending": TestStatus.SKIPPED,
}


class DotnetXmlParser(RunnerParser):
    """One element per test in each format: NUnit <test-case result=>, TRX <UnitTestResult outcome=>,
    xUnit.net <test result=>."""

    runner = "dotnet-xml"
    family = "dotnet-xml"
    hints = ("<test-", "<TestRun", "<UnitTestResult", "<assembl")
    marker_pattern = re.compile(
        r"<(?:test-run|test-results|TestRun|assemblies|assembly)\b[^>]*>|<test-case\b"
    )

    def parse(self, text: str, command: str = "") -> TestReport | None:
        tests: dict[str, TestStatus] = {}
        totals = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
        runner = self.runner
        for match in _CASE.finditer(text):
            tag, attrs = match.group(1), attributes(match.group(2))
            if tag == "UnitTestResult":
                runner, name, outcome = "trx", attrs.get("testName", ""), attrs.get("outcome", "")
            elif tag == "test-case":
                runner, name = "nunit-xml", attrs.get("fullname") or attrs.get("name", "")
                outcome = attrs.get("result", "")
                if attrs.get("label", "").lower() == "error" and outcome.lower() == "failed":
                    outcome = "error"
                if attrs.get("executed", "").lower() == "false":
                    outcome = "skipped"
            else:
                if "result" not in attrs:
                    continue
                runner, name, outcome = "xunit-xml", attrs.get("name", ""), attrs["result"]
            status = _OUTCOMES.get(outcome.lower())
            if status is None or not name:
                continue
            record(tests, name, status)
            totals[status.value] += 1
        if not tests:
            return None
        return TestReport(
            runner=runner,
            tests=tests,
            totals=totals,
            complete=bool(_ROOT_CLOSE.search(text)),
            failed_signal=bool(totals["failed"] or totals["error"]),
        )
