"""JUnit XML reports (Surefire, pytest --junitxml, jest-junit, go-junit-report, PHPUnit...) printed or cat'ed."""

from __future__ import annotations

import html
import re

from contextweaver.types import TestStatus
from contextweaver.validation.parsers.base import RunnerParser
from contextweaver.validation.report import TestReport, record

_ATTRIBUTE = re.compile(r"""([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_TAG = re.compile(r"<(testsuite|testcase)\b([^>]*?)(/?)>|</testsuite>")
_OUTCOME = re.compile(r"<(failure|error|skipped)\b")
_STATUSES = {"failure": TestStatus.FAILED, "error": TestStatus.ERROR, "skipped": TestStatus.SKIPPED}


def attributes(raw: str) -> dict[str, str]:
    """XML attributes by regex, so a truncated or surrounded report still reads."""
    return {
        m.group(1): html.unescape(m.group(2) if m.group(2) is not None else m.group(3))
        for m in _ATTRIBUTE.finditer(raw)
    }


class JunitXmlParser(RunnerParser):
    """Scans tags instead of building a tree: robust to text around the XML and to a cut-off report."""

    runner = "junit-xml"
    family = "junit-xml"
    hints = ("<testsuite", "<testcase")
    marker_pattern = re.compile(r"<testsuites?\b[^>]*>|<testcase\b")

    def parse(self, text: str, command: str = "") -> TestReport | None:
        tests: dict[str, TestStatus] = {}
        totals = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
        suites: list[str] = []
        opened = closed = 0
        found = False
        for match in _TAG.finditer(text):
            tag = match.group(1)
            if tag is None:
                closed += 1
                if suites:
                    suites.pop()
                continue
            attrs = attributes(match.group(2))
            if tag == "testsuite":
                if match.group(3) != "/":
                    opened += 1
                    suites.append(attrs.get("name", ""))
                continue
            found = True
            status = TestStatus.PASSED
            if match.group(3) != "/":
                close = text.find("</testcase>", match.end())
                body = text[match.end() : close if close >= 0 else len(text)]
                next_case = body.find("<testcase")
                body = body if next_case < 0 else body[:next_case]
                outcome = _OUTCOME.search(body)
                if outcome:
                    status = _STATUSES[outcome.group(1)]
            owner = attrs.get("classname") or (suites[-1] if suites else "")
            name = attrs.get("name", "")
            record(tests, f"{owner}.{name}" if owner and owner != name else name, status)
            totals[status.value] += 1
        if not found and not opened:
            return None
        return TestReport(
            runner=self.runner,
            tests=tests,
            totals=totals,
            complete=closed >= opened,
            failed_signal=bool(totals["failed"] or totals["error"]),
        )
