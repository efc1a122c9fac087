"""JUnit XML reports (Surefire, pytest --junitxml, jest-junit, go-junit-report, PHPUnit...) printed or cat'ed."""

from __future__ import annotations

import html
import re

from contextweaver.types import TestStatus
from contextweaver.validation.parsers.base import RunnerParser
from contextweaver.validation.report import STATUS_KEY, TestReport, record

_TAG = re.compile(r"<(testsuite|testcase)\b([^>]*)>|</testsuite>")
"""Greedy up to `>` (a lazy scan is several times slower on thousands of tags)."""
_OUTCOME = re.compile(r"<(failure|error|skipped)\b")
_IGNORED = re.compile(r"<!--.*?-->|<!\[CDATA\[.*?\]\]>", re.DOTALL)
"""Comments and CDATA are not elements: a commented-out <testsuite> or a <testcase> quoted in a
failure's CDATA is no test (the JUnit schema counts elements only). An unclosed one is left alone."""
_ONE_ATTRIBUTE: dict[str, re.Pattern[str]] = {}
_STATUSES = {"failure": TestStatus.FAILED, "error": TestStatus.ERROR, "skipped": TestStatus.SKIPPED}


def attribute(raw: str, key: str) -> str | None:
    """One attribute of a tag: plain string search for the usual ` key="value"`, the regex otherwise
    (other spacing, single quotes)."""
    spaced = raw.find(f' {key}="')
    if spaced >= 0:
        end = raw.find('"', spaced + len(key) + 3)
        if end >= 0:
            value = raw[spaced + len(key) + 3 : end]
            return html.unescape(value) if "&" in value else value
    if key not in raw:
        return None
    pattern = _ONE_ATTRIBUTE.get(key)
    if pattern is None:
        pattern = _ONE_ATTRIBUTE.setdefault(
            key, re.compile(rf"""(?<![\w:.-]){re.escape(key)}\s*=\s*(?:"([^"]*)"|'([^']*)')""")
        )
    match = pattern.search(raw)
    if match is None:
        return None
    value = match.group(1) if match.group(1) is not None else match.group(2)
    return html.unescape(value) if "&" in value else value


def without_comments(text: str) -> str:
    """The XML without comments and CDATA sections (checked with `in` first: usually there are none)."""
    if "<!--" not in text and "<![CDATA[" not in text:
        return text
    return _IGNORED.sub(" ", text)


class JunitXmlParser(RunnerParser):
    """Scans tags instead of building a tree: robust to text around the XML and to a cut-off report."""

    runner = "junit-xml"
    family = "junit-xml"
    marker_pattern = re.compile(r"<testsuites?\b[^>]*>|<testcase\b")

    def parse(self, text: str, command: str = "") -> TestReport | None:
        text = without_comments(text)
        tests: dict[str, TestStatus] = {}
        totals = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
        suites: list[str] = []
        opened = closed = 0
        found = False
        for match in _TAG.finditer(text):
            tag, raw = match.groups()
            if tag is None:
                closed += 1
                if suites:
                    suites.pop()
                continue
            self_closing = raw.endswith("/")
            if tag == "testsuite":
                if not self_closing:
                    opened += 1
                    suites.append(attribute(raw, "name") or "")
                continue
            found = True
            status = TestStatus.PASSED
            if not self_closing:
                stop = text.find("</testcase>", match.end())
                stop = len(text) if stop < 0 else stop
                next_case = text.find("<testcase", match.end(), stop)
                outcome = _OUTCOME.search(text, match.end(), stop if next_case < 0 else next_case)
                if outcome:
                    status = _STATUSES[outcome.group(1)]
            # attribute()'s plain-search path, inlined for the two attributes every testcase has
            at = raw.find(' classname="')
            stop = raw.find('"', at + 12) if at >= 0 else -1
            owner = raw[at + 12 : stop] if stop >= 0 else attribute(raw, "classname") or ""
            if stop >= 0 and "&" in owner:
                owner = html.unescape(owner)
            at = raw.find(' name="')
            stop = raw.find('"', at + 7) if at >= 0 else -1
            name = raw[at + 7 : stop] if stop >= 0 else attribute(raw, "name") or ""
            if stop >= 0 and "&" in name:
                name = html.unescape(name)
            owner = owner or (suites[-1] if suites else "")
            test = f"{owner}.{name}" if owner and owner != name else name
            if tests.setdefault(test, status) is not status:  # seen before: the severer status stays
                record(tests, test, status)
            totals[STATUS_KEY[status]] += 1
        if not found and not opened:
            return None
        return TestReport(
            runner=self.runner,
            tests=tests,
            totals=totals,
            complete=closed >= opened,
            failed_signal=bool(totals["failed"] or totals["error"]),
        )
