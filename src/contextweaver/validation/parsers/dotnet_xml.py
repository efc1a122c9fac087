"""NUnit (2 and 3), Visual Studio TRX and xUnit.net XML reports printed or cat'ed by an action."""

from __future__ import annotations

import re

from contextweaver.records import TestStatus
from contextweaver.validation.parsers.base import RunnerParser
from contextweaver.validation.parsers.junit_xml import ATTRIBUTES, attribute, without_comments
from contextweaver.validation.report import STATUS_KEY, TestReport, record

_CASE = re.compile(rf"<(test-case|UnitTestResult|test)(?=[\s/>])({ATTRIBUTES})>")
"""A `>` inside a quoted value (a parameter `"a>b"`) does not end the tag; an opening that never closes
stops at the next `<`, not the end of the text."""
_ROOT_CLOSE = re.compile(r"</(?:test-run|test-results|TestRun|assemblies|assembly)>")
_OUTCOMES = {
    "passed": TestStatus.PASSED,
    "success": TestStatus.PASSED,
    "pass": TestStatus.PASSED,
    "completed": TestStatus.PASSED,
    "passedbutrunaborted": TestStatus.PASSED,
    "failed": TestStatus.FAILED,
    "failure": TestStatus.FAILED,
    "fail": TestStatus.FAILED,
    "error": TestStatus.ERROR,
    "timeout": TestStatus.ERROR,
    "aborted": TestStatus.ERROR,
    "disconnected": TestStatus.ERROR,
    "skipped": TestStatus.SKIPPED,
    "skip": TestStatus.SKIPPED,
    "ignored": TestStatus.SKIPPED,
    "notexecuted": TestStatus.SKIPPED,
    "notrunnable": TestStatus.SKIPPED,
    "inconclusive": TestStatus.SKIPPED,
    "pending": TestStatus.SKIPPED,
    "warning": TestStatus.SKIPPED,
}
"""TRX, NUnit and xUnit.net outcome words. A TRX or NUnit `Warning` is neither a pass nor a failure."""


_NUNIT2_SUCCESS = {"True": "success", "False": "failure", "true": "success", "false": "failure"}
"""NUnit 2.0-2.4 have no `result=`: `executed` and `success` say it."""
_TRX_DEFINITION = re.compile(rf"<(UnitTest|TestMethod)(?=[\s/>])({ATTRIBUTES})>")
_TRX_SUMMARY = re.compile(rf"<ResultSummary(?=[\s/>])({ATTRIBUTES})>")
_TRX_COUNTERS = re.compile(rf"<Counters(?=[\s/>])({ATTRIBUTES})>")
_TRX_RUN_INFO = re.compile(rf"<RunInfo(?=[\s/>])({ATTRIBUTES})>\s*<Text>([^<]{{0,300}})")
_TRX_FAILED_RUN = frozenset(("failed", "error", "aborted", "timeout"))
"""A ResultSummary outcome that fails the run even when no result says so (the test host crashed)."""
_TRX_COUNTER_KEYS = {
    "passed": "passed",
    "failed": "failed",
    "error": "error",
    "timeout": "error",
    "aborted": "error",
    "notExecuted": "skipped",
    "inconclusive": "skipped",
}


def _trx_definitions(text: str) -> dict[str, tuple[str, str]]:
    """TRX test id -> (the test's name, the class of its method) from TestDefinitions."""
    definitions: dict[str, tuple[str, str]] = {}
    current, name = "", ""
    for tag, raw in _TRX_DEFINITION.findall(text):
        if tag == "UnitTest":
            current, name = attribute(raw, "id") or "", attribute(raw, "name") or ""
        elif current:
            owner = (attribute(raw, "className") or "").split(",", 1)[0].strip()
            definitions[current] = (name or attribute(raw, "name") or "", owner)
            current = ""
    return definitions


class _Trx:
    """A TRX report's results, named as the report names them (`testName`); a name two classes share
    is qualified with each class, so their tests stay apart."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.results: list[tuple[str, str, TestStatus]] = []
        """(testName, testId, status) in report order."""
        self.defined = "<TestMethod" in text
        """Whether the report has definitions to name a result's class by (a test id is read only then)."""

    def add(self, raw: str) -> None:
        status = _OUTCOMES.get((attribute(raw, "outcome") or "").lower())
        if status is not None:
            test_id = attribute(raw, "testId") or "" if self.defined else ""
            self.results.append((attribute(raw, "testName") or "", test_id, status))

    def tests(self, totals: dict[str, int]) -> dict[str, TestStatus]:
        """The results by name, each also counted into `totals` (a repeated name counts each time)."""
        definitions = _trx_definitions(self.text) if self.defined and self.results else {}
        first_owner: dict[str, str] = {}
        shared: set[str] = set()
        """Names whose results belong to more than one class."""
        named: list[tuple[str, str, TestStatus]] = []
        for name, test_id, status in self.results:
            defined_name, owner = definitions.get(test_id, ("", "")) if definitions else ("", "")
            name = name or defined_name
            if name:
                if first_owner.setdefault(name, owner) != owner:
                    shared.add(name)
                named.append((name, owner, status))
        tests: dict[str, TestStatus] = {}
        for name, owner, status in named:
            if name in shared and owner and not name.startswith(owner + "."):
                name = f"{owner}.{name}"
            record(tests, name, status)
            totals[STATUS_KEY[status]] += 1
        return tests

    def summary(self) -> tuple[dict[str, int] | None, str]:
        """The ResultSummary's counters (None without one) and why it failed the run ("" when it did not)."""
        summary = _TRX_SUMMARY.search(self.text)
        if summary is None:
            return None, ""
        counters = _TRX_COUNTERS.search(self.text, summary.end())
        totals: dict[str, int] | None = None
        if counters is not None:
            totals = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
            for key, into in _TRX_COUNTER_KEYS.items():
                value = attribute(counters.group(1), key) or ""
                totals[into] += int(value) if value.isdigit() and len(value) < 10 else 0
        outcome = (attribute(summary.group(1), "outcome") or "").lower()
        if outcome not in _TRX_FAILED_RUN:
            return totals, ""
        info = _TRX_RUN_INFO.search(self.text, summary.end())
        reason = " ".join(info.group(2).split())[:160] if info else f"run outcome {outcome}"
        return totals, reason


def _nunit_case(raw: str) -> tuple[str, str]:
    """An NUnit test case's name and outcome word: `fullname` (NUnit 3) or `name` (NUnit 2, already
    full); a case with neither a fullname nor a dotted name is qualified by its `classname`."""
    name = attribute(raw, "fullname") or ""
    if not name:
        name = attribute(raw, "name") or ""
        owner = attribute(raw, "classname") or ""
        if owner and not name.startswith(owner + "."):
            name = f"{owner}.{name}"
    outcome = attribute(raw, "result") or _NUNIT2_SUCCESS.get(attribute(raw, "success") or "", "")
    if (attribute(raw, "label") or "").lower() == "error" and outcome.lower() == "failed":
        outcome = "error"
    if (attribute(raw, "executed") or "").lower() == "false":
        outcome = "skipped"
    return name, outcome


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
        text = without_comments(text)
        trx = _Trx(text)
        for tag, raw in _CASE.findall(text):
            if tag == "UnitTestResult":
                trx.add(raw)
                continue
            if tag == "test-case":
                runner = "nunit-xml"
                name, outcome = _nunit_case(raw)
            else:
                result = attribute(raw, "result")
                if result is None:
                    continue
                runner, name, outcome = "xunit-xml", attribute(raw, "name") or "", result
            status = _OUTCOMES.get(outcome.lower())
            if status is not None and name:
                record(tests, name, status)
                totals[STATUS_KEY[status]] += 1
        reason = ""
        summary: dict[str, int] | None = None
        if trx.results or "<TestRun" in text:
            runner = "trx"
            tests.update(trx.tests(totals))
            summary, reason = trx.summary()
        if not tests and summary is None and not reason:
            return None
        if not tests and summary is not None:
            totals = summary  # a report listing no result: its counters are all there is
        return TestReport(
            runner=runner,
            tests=tests,
            totals=totals,
            complete=bool(_ROOT_CLOSE.search(text)),
            failed_signal=bool(totals["failed"] or totals["error"] or reason),
            reason=reason,
        )
