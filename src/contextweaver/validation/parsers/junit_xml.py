"""JUnit XML reports (Surefire, pytest --junitxml, jest-junit, go-junit-report, PHPUnit...) printed or cat'ed."""

from __future__ import annotations

import html
import re

from contextweaver.records import TestStatus
from contextweaver.validation.parsers.base import RunnerParser
from contextweaver.validation.report import STATUS_KEY, TestReport, record

ATTRIBUTES = r"""[^<>"']*+(?:(?:"[^"<]*+"|'[^'<]*+')[^<>"']*+)*+"""
"""A tag's attributes: a `>` inside a quoted value (a parameter `"a>b"`) does not end the tag, and an
opening whose `>` never comes stops at the next `<` instead of rescanning the rest of the text (a raw
`<` cannot occur inside a well-formed tag)."""
_TAG = re.compile(rf"<(testsuites?|testcase)(?=[\s/>])({ATTRIBUTES})>|</(testsuites?)>")
_OUTCOME = re.compile(r"<(failure|error|skipped)\b")
_IGNORED = {"<!--": "-->", "<![CDATA[": "]]>"}
"""Comments and CDATA are not elements: a commented-out <testsuite> or a <testcase> quoted in a
failure's CDATA is no test (the JUnit schema counts elements only). An unclosed one is left alone."""
_ONE_ATTRIBUTE: dict[str, re.Pattern[str]] = {}
_STATUSES = {"failure": TestStatus.FAILED, "error": TestStatus.ERROR, "skipped": TestStatus.SKIPPED}
_SEVERITY = {"skipped": 0, "failure": 1, "error": 2}
_NOT_RUN = frozenset(("disabled", "notrun", "skipped", "suppressed"))
"""A testcase's own `status=` or `result=` saying it did not run (CTest, GoogleTest): skipped, not passed."""
_YES = frozenset(("true", "1", "yes"))
"""A testcase's `disabled=` or `skipped=` flag (the `<skipped/>` child written as an attribute)."""
_NOT_RUN_KEYS = ("status=", "result=", 'disabled="', 'skipped="t', 'skipped="1"', 'skipped="y')
"""What the report must hold for any testcase to say by attribute that it did not run (a suite's
`skipped="3"` count does not count), searched once per report rather than once per testcase."""
_DECLARED = {"failures": "failed", "errors": "error", "skipped": "skipped", "disabled": "skipped"}
"""A suite's own count attributes, named the project's way (`tests` is the total)."""


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

    def fails_in(self, text: str) -> bool:
        """A `<failure>` or `<error>` element, not one quoted in a comment or CDATA (a passing NUnit
        report's captured output that prints `<error code="0"/>` fails nothing)."""
        marker = self.failure_marker
        return bool(marker.search(text)) and bool(marker.search(without_comments(text)))

    def parse(self, text: str, command: str = "") -> TestReport | None:
        text = without_comments(text)
        tests: dict[str, TestStatus] = {}
        totals = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
        suites: list[str] = []
        root: dict[str, int] = {}
        outer: dict[str, int] = {}
        """The `<testsuites>` counts and the outermost suites' summed: the totals of a report that lists
        no testcase."""
        declared_failure = False
        opened = closed = 0
        found = False
        case_end = 0
        """Where the current testcase's `</testcase>` is (-1: there is none left), found once per case."""
        not_run_keys = any(key in text for key in _NOT_RUN_KEYS)
        # A state machine over the tags reads better than a table here: a testcase's name and a suite's
        # counts depend on the stack of suites open around it, which only a running stack keeps in one pass.
        for match in _TAG.finditer(text):
            tag, raw, closing = match.groups()
            if closing:
                closed += 1
                if suites and closing == "testsuite":
                    suites.pop()
                continue
            if tag != "testcase":
                counts = _declared(raw)
                declared_failure |= bool(counts.get("failed") or counts.get("error"))
                if tag == "testsuites":
                    root = root or counts
                elif not suites:
                    for key, value in counts.items():
                        outer[key] = outer.get(key, 0) + value
                if not raw.endswith("/"):
                    opened += 1
                    if tag == "testsuite":
                        suites.append(raw)  # its name is read only when a testcase needs it
                continue
            found = True
            position = match.end()
            if not raw.endswith("/") and 0 <= case_end < position:
                case_end = text.find("</testcase>", position)
            status = _case_status(text, raw, position, case_end, not_run_keys)
            test = _case_name(raw, suites)
            if tests.setdefault(test, status) is not status:  # seen before: the severer status stays
                record(tests, test, status)
            totals[STATUS_KEY[status]] += 1
        declared = root if "total" in root else outer
        if not found and not opened and "total" not in declared:
            return None
        if not found and "total" in declared:
            totals = _declared_totals(declared)
        unshown = declared_failure and not (totals["failed"] or totals["error"])
        return TestReport(
            runner=self.runner,
            tests=tests,
            totals=totals,
            complete=closed >= opened,
            failed_signal=bool(totals["failed"] or totals["error"] or declared_failure),
            reason="a testsuite counts failures its testcases shown do not have" if unshown else "",
        )


def _declared(raw: str) -> dict[str, int]:
    """A suite's `tests`/`failures`/`errors`/`skipped`/`disabled` attributes (those it has)."""
    counts: dict[str, int] = {}
    if "=" not in raw:
        return counts
    for key, into in (("tests", "total"), *_DECLARED.items()):
        value = attribute(raw, key)
        if value is not None and value.strip().isdigit() and len(value) < 10:
            counts[into] = counts.get(into, 0) + int(value)
    return counts


def _declared_totals(declared: dict[str, int]) -> dict[str, int]:
    """Totals from a report's declared counts: what is not failed, errored or skipped passed."""
    failed, error, skipped = (declared.get(key, 0) for key in ("failed", "error", "skipped"))
    passed = max(0, declared.get("total", 0) - failed - error - skipped)
    return {"passed": passed, "failed": failed, "error": error, "skipped": skipped}


def _case_status(text: str, raw: str, position: int, case_end: int, not_run_keys: bool) -> TestStatus:
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
    if status is TestStatus.PASSED and not_run_keys and _not_run(raw):
        return TestStatus.SKIPPED
    return status


def _not_run(raw: str) -> bool:
    """A testcase's attributes saying it did not run: `status="notrun"` (CTest), `result="suppressed"`
    (GoogleTest), `disabled="true"` or `skipped="true"` (a `<skipped/>` written as an attribute). Asked
    only when the report holds one of them somewhere (`_NOT_RUN_KEYS`): most reports hold none."""
    for key, words in (("status", _NOT_RUN), ("result", _NOT_RUN), ("disabled", _YES), ("skipped", _YES)):
        if (attribute(raw, key) or "").strip().lower() in words:
            return True
    return False


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
