"""jest: PASS/FAIL suite lines, verbose ✓ ✕ ○ ✎ test lines under describe blocks, ● failure headers, Tests: totals."""

from __future__ import annotations

import re

from contextweaver.records import TestStatus
from contextweaver.validation.parsers.base import RunnerParser, bounded_int, counts_from, framed
from contextweaver.validation.report import TestReport, closing_report, record

_JS_FILE = r"\S{1,400}\.(?:[cm]?[jt]sx?|vue|coffee|svelte)"
"""Bounded: a path is never longer, and a megabyte-long word is not backtracked over in search of `.js`."""
_WORDS = r" ++(?:[^ \n]++ ++)*?"
"""The words before the file (a project name): one word per step, so a line of spaces is read once."""
_SUITE = re.compile(rf"\n(PASS|FAIL){_WORDS}({_JS_FILE})(?: \([\d.]+ ?m?s(?:, [^)]*)?\))?(?=\n)")
_LINE = re.compile(
    r"\n( ++|(?=[✓✕○✎√×] |● ))"
    r"(?:([✓✕○✎√×]) ((?:([^\n]+) \(\d+(?:\.\d+)? ?m?s\)|[^\n]+))|● ([^\n]+)|(\S[^\n]*))(?=\n)"
)
"""Groups: indent, mark, rest (kind, title and duration: see _title), the title before a duration that
ends the line (found by backtracking from the line's end: a few steps), header, other line. A test or
header line may start at the margin (output a tool dedented, as jest's own snapshots of its output)."""
_DURATION = re.compile(r"\d+(?:\.\d+)? ?m?s\)")
"""What follows the last ` (` of a title when jest printed the test's duration."""
_TESTS = re.compile(r"\nTests: ++([^\n]*+)")
_SUITES = re.compile(r"\nTest Suites: ++([^\n]*+)")
"""The counts line whole; its last number is cut off with str methods (a pattern looking for the
last number would retry from every position of a long line)."""
_COUNT = re.compile(r"(\d+) (passed|failed|skipped|todo|pending)")
_MARKS = {
    "✓": TestStatus.PASSED,
    "√": TestStatus.PASSED,
    "✕": TestStatus.FAILED,
    "×": TestStatus.FAILED,
    "○": TestStatus.SKIPPED,
    "✎": TestStatus.SKIPPED,
}
_KINDS = ("skipped ", "todo ")
_NOT_TESTS = ("Test suite failed to run", "Console")


class JestParser(RunnerParser):
    """Ids are `suite › describe › test`, the same shape jest prints in its ● failure headers."""

    passing_rows = (r"[✓✔√] [^\n]*",)
    runner = "jest"
    family = "jest"
    command_pattern = re.compile(r"\bjest\b|\b(?:npm|yarn|pnpm)(?: run)? test\b")
    failure_marker = re.compile(r"\n *+[✕×] |\nFAIL |\nTests: [^\n]*?\b[1-9]\d* failed")
    hints = ("PASS", "FAIL", "Tests:")
    marker_pattern = re.compile(
        rf"\n(?:(?:PASS|FAIL){_WORDS}{_JS_FILE}|Tests: ++(?:\d++ \w++, )*+\d++ total(?=\n))"
    )

    def parse(self, text: str, command: str = "") -> TestReport | None:
        text = framed(text)
        tests: dict[str, TestStatus] = {}
        suites = list(_SUITE.finditer(text))
        failed = any(suite.group(1) == "FAIL" for suite in suites)
        for index, suite in enumerate(suites):
            end = suites[index + 1].start() if index + 1 < len(suites) else len(text)
            failed |= self._suite(text, suite.group(2), suite.end(), end, tests)
        failed |= self._suite(text, "", 0, suites[0].start() if suites else len(text), tests)
        totals: dict[str, int] | None = None
        for line in _TESTS.finditer(text):
            head, total = _last_number(line.group(1))
            if total is None:
                continue
            counts = counts_from(_COUNT.findall(head), {"pending": "skipped"})
            counts["total"] = total
            previous: dict[str, int] = totals or {}
            totals = {key: previous.get(key, 0) + value for key, value in counts.items()}
        failed |= any(
            "failed" in line.group(1) and _last_number(line.group(1))[1] is not None
            for line in _SUITES.finditer(text)
        )
        failed |= bool(totals and totals.get("failed"))
        if not suites and not tests and totals is None:
            return None
        return closing_report(self.runner, tests, totals, failed=failed)

    def _suite(self, text: str, suite: str, start: int, end: int, tests: dict[str, TestStatus]) -> bool:
        """Record one suite's tests; True when jest said the suite itself failed to run."""
        describes: list[tuple[int, str]] = []
        top = -1
        """The innermost describe's indent: a line indented no deeper closes it."""
        broken = False
        prefix = f"{suite} › " if suite else ""
        base = prefix
        """The suite and describe titles above the line, each followed by ` › ` (built once per block)."""
        marks = _MARKS
        # end + 1: the newline that ends the suite's last line
        for spaces, mark, rest, timed, header, other in _LINE.findall(text, start, end + 1):
            if top >= len(spaces):
                indent = len(spaces)
                while describes and describes[-1][0] >= indent:
                    describes.pop()
                top = describes[-1][0] if describes else -1
                base = prefix + "".join(f"{name} › " for _, name in describes)
            if mark:
                title = _title(rest) if rest.startswith(_KINDS) else (timed or rest).strip()
                test_id = base + title
                status = marks[mark]
                if tests.setdefault(test_id, status) is not status:  # seen before: the severer status stays
                    record(tests, test_id, status)
            elif header:
                describes, top, base = [], -1, prefix
                header = header.strip()
                if header.startswith(_NOT_TESTS[0]):
                    broken = True
                    record(tests, suite or "jest suite", TestStatus.ERROR)
                elif not header.startswith(_NOT_TESTS[1]) and f"{prefix}{header}" not in tests:
                    record(tests, f"{prefix}{header}", TestStatus.FAILED)
            elif len(spaces) >= 2 and "|" not in other:
                top = len(spaces)
                describes.append((top, other.strip()))
                base += f"{describes[-1][1]} › "
        return broken


def _last_number(line: str) -> tuple[str, int | None]:
    """`1 failed, 3 total` -> ("1 failed, ", 3): the text before the total and the total."""
    if not line.endswith(" total"):
        return line, None
    body = line[:-6]
    head = body.rstrip("0123456789")
    return head, bounded_int(body[len(head) :]) if len(head) < len(body) else None


def _title(rest: str) -> str:
    """The test title after the mark: without a leading `skipped `/`todo ` and a trailing `(12 ms)`."""
    if rest.startswith(_KINDS):
        kind = _KINDS[0] if rest.startswith(_KINDS[0]) else _KINDS[1]
        if len(rest) > len(kind):
            rest = rest[len(kind) :]
    if rest.endswith("s)"):
        head, _, tail = rest.rpartition(" (")
        if head and _DURATION.fullmatch(tail):
            rest = head
    return rest.strip()
