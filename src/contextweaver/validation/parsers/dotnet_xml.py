"""NUnit (2 and 3), Visual Studio TRX and xUnit.net XML reports printed or cat'ed by an action."""

from __future__ import annotations

import re

from contextweaver.records import TestStatus
from contextweaver.validation.parsers.base import RunnerParser
from contextweaver.validation.parsers.junit_xml import attribute, without_comments
from contextweaver.validation.report import STATUS_KEY, TestReport, record

_CASE = re.compile(r"<(test-case|UnitTestResult|test)(?=[\s/>])([^<>]*+)>")
"""`[^<>]`: an opening that never closes stops at the next tag, not the end of the text."""
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


_NUNIT2_SUCCESS = {"True": "success", "False": "failure", "true": "success", "false": "failure"}
"""NUnit 2.0-2.4 have no `result=`: `executed` and `success` say it."""
_TRX_DEFINITION = re.compile(r"<(UnitTest|TestMethod)\b([^<>]*+)>")


def _trx_classes(text: str) -> dict[str, str]:
    """TRX test id -> the class of its method (the results name only the method: two classes' tests of
    one name would fold into one)."""
    classes: dict[str, str] = {}
    current = ""
    for tag, raw in _TRX_DEFINITION.findall(text):
        if tag == "UnitTest":
            current = attribute(raw, "id") or ""
        elif current:
            owner = (attribute(raw, "className") or "").split(",", 1)[0].strip()
            if owner:
                classes[current] = owner
            current = ""
    return classes


class DotnetXmlParser(RunnerParser):
    """One element per test in each format: NUnit <test-case result=>, TRX <UnitTestResult outcome=>,
    xUnit.net <test result=>."""

    runner = "dotnet-xml"
    family = "dotnet-xml"
    failure_marker = re.compile(r'(?:outcome|result)="(?:Failed|Error)"|success="False"')
    marker_pattern = re.compile(
        r"<(?:test-run|test-results|TestRun|assemblies|assembly)\b[^<>]*+>|<test-case\b"
    )

    def parse(self, text: str, command: str = "") -> TestReport | None:
        tests: dict[str, TestStatus] = {}
        totals = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
        runner = self.runner
        classes: dict[str, str] | None = None
        text = without_comments(text)
        for tag, raw in _CASE.findall(text):
            if tag == "UnitTestResult":
                runner = "trx"
                name, outcome = attribute(raw, "testName") or "", attribute(raw, "outcome") or ""
                if classes is None:
                    classes = _trx_classes(text)
                owner = classes.get(attribute(raw, "testId") or "", "")
                if owner and not name.startswith(owner + "."):
                    name = f"{owner}.{name}"
            elif tag == "test-case":
                runner, name = "nunit-xml", attribute(raw, "fullname") or attribute(raw, "name") or ""
                outcome = attribute(raw, "result") or _NUNIT2_SUCCESS.get(attribute(raw, "success") or "", "")
                if (attribute(raw, "label") or "").lower() == "error" and outcome.lower() == "failed":
                    outcome = "error"
                if (attribute(raw, "executed") or "").lower() == "false":
                    outcome = "skipped"
            else:
                result = attribute(raw, "result")
                if result is None:
                    continue
                runner, name, outcome = "xunit-xml", attribute(raw, "name") or "", result
            status = _OUTCOMES.get(outcome.lower())
            if status is None or not name:
                continue
            record(tests, name, status)
            totals[STATUS_KEY[status]] += 1
        if not tests:
            return None
        return TestReport(
            runner=runner,
            tests=tests,
            totals=totals,
            complete=bool(_ROOT_CLOSE.search(text)),
            failed_signal=bool(totals["failed"] or totals["error"]),
        )
