"""JUnit XML reports (Surefire, pytest --junitxml, jest-junit, go-junit-report, PHPUnit...) printed or cat'ed."""

from __future__ import annotations

import html
import re

from contextweaver.records import TestStatus
from contextweaver.validation.parsers.base import RunnerParser
from contextweaver.validation.report import STATUS_KEY, TestReport, record

_TAG = re.compile(r"<(testsuite|testcase)\b([^<>]*+)>|</testsuite>")
"""`[^<>]`: an opening whose `>` never comes stops at the next tag instead of rescanning the rest of
the text (a raw `<` cannot occur inside a well-formed tag)."""
_OUTCOME = re.compile(r"<(failure|error|skipped)\b")
_IGNORED = {"<!--": "-->", "<![CDATA[": "]]>"}
"""Comments and CDATA are not elements: a commented-out <testsuite> or a <testcase> quoted in a
failure's CDATA is no test (the JUnit schema counts elements only). An unclosed one is left alone."""
_ONE_ATTRIBUTE: dict[str, re.Pattern[str]] = {}
_STATUSES = {"failure": TestStatus.FAILED, "error": TestStatus.ERROR, "skipped": TestStatus.SKIPPED}
_SEVERITY = {"skipped": 0, "failure": 1, "error": 2}
_NOT_RUN = frozenset(("disabled", "notrun", "skipped"))
"""A testcase's own `status=` saying it did not run (CTest, GoogleTest): skipped, not passed."""


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
    pieces: list[str] = []
    position = 0
    upcoming = {opener: text.find(opener) for opener in _IGNORED}
    """The next occurrence of each opener at or after `position` (-1: none left), so every opener and
    closer is searched for once: linear even when nothing closes."""
    while True:
        live = [(at, opener) for opener, at in upcoming.items() if at >= 0]
        if not live:
            break
        at, opener = min(live)
        close = text.find(_IGNORED[opener], at + len(opener))
        if close < 0:
            upcoming[opener] = -1  # unclosed: this opener and every later one stay as text
            continue
        pieces += (text[position:at], " ")
        position = close + len(_IGNORED[opener])
        for other, next_at in upcoming.items():
            if 0 <= next_at < position:
                upcoming[other] = text.find(other, position)
    pieces.append(text[position:])
    return "".join(pieces)


class JunitXmlParser(RunnerParser):
    """Scans tags instead of building a tree: robust to text around the XML and to a cut-off report."""

    runner = "junit-xml"
    family = "junit-xml"
    failure_marker = re.compile(r"<(?:failure|error)\b")
    marker_pattern = re.compile(r"<testsuites?\b[^<>]*+>|<testcase\b")

    def parse(self, text: str, command: str = "") -> TestReport | None:
        text = without_comments(text)
        tests: dict[str, TestStatus] = {}
        totals = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
        suites: list[str] = []
        opened = closed = 0
        found = False
        case_end = 0
        """Where the current testcase's `</testcase>` is (-1: there is none left), found once per case."""
        for match in _TAG.finditer(text):
            tag, raw = match.groups()
            if tag == "testsuite":
                if not raw.endswith("/"):
                    opened += 1
                    suites.append(raw)  # its name is read only when a testcase needs it
                continue
            if tag is None:
                closed += 1
                if suites:
                    suites.pop()
                continue
            found = True
            position = match.end()
            if not raw.endswith("/") and 0 <= case_end < position:
                case_end = text.find("</testcase>", position)
            status = _case_status(text, raw, position, case_end)
            test = _case_name(raw, suites)
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


def _case_status(text: str, raw: str, position: int, case_end: int) -> TestStatus:
    """A testcase's status: the most severe outcome among its children up to its `</testcase>` (at
    `case_end`, -1: none left) or the next testcase (`<skipped/>` may precede `<failure>`); passed without
    one, unless its `status` attribute says it did not run."""
    status = TestStatus.PASSED
    if not raw.endswith("/"):
        stop = len(text) if case_end < 0 else case_end
        next_case = text.find("<testcase", position, stop)
        outcomes = _OUTCOME.findall(text, position, stop if next_case < 0 else next_case)
        if outcomes:
            status = _STATUSES[max(outcomes, key=_SEVERITY.__getitem__)]
    if (
        status is TestStatus.PASSED
        and ' status="' in raw
        and (attribute(raw, "status") or "").lower() in _NOT_RUN
    ):
        return TestStatus.SKIPPED
    return status


def _case_name(raw: str, suites: list[str]) -> str:
    """`classname.name` (the enclosing suite's name when the case has no classname), attribute()'s
    plain-search path inlined for the two attributes every testcase has."""
    owner, name = _plain(raw, "classname"), _plain(raw, "name")
    owner = owner or (attribute(suites[-1], "name") or "" if suites else "")
    return f"{owner}.{name}" if owner and owner != name else name


def _plain(raw: str, key: str) -> str:
    at = raw.find(f' {key}="')
    stop = raw.find('"', at + len(key) + 3) if at >= 0 else -1
    if stop < 0:
        return attribute(raw, key) or ""
    value = raw[at + len(key) + 3 : stop]
    return html.unescape(value) if "&" in value else value
