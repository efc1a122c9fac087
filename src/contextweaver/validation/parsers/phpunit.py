"""PHPUnit: the progress dots, numbered failure and error sections, `OK (N tests, ..)` or `Tests: N, ..` totals."""

from __future__ import annotations

import re

from contextweaver.records import TestStatus
from contextweaver.validation.parsers.base import RunnerParser, bounded_int, framed
from contextweaver.validation.report import TestReport, add_totals, closing_report, record

_OK = re.compile(r"\nOK \((\d++) tests?, \d++ assertions?\)")
_TOTALS = re.compile(r"\nTests: (\d++), Assertions: \d++((?:, \w++: \d++)*+)\.?(?=\n)")
_SECTION = re.compile(
    r"\nThere (?:was|were) \d++ (failure|error|skipped test|incomplete test|risky test|warning)s?:"
)
_NUMBERED = re.compile(r"\n\d++\) ([\w\\]++::\w++)")
_KEYS = {"Errors": "error", "Failures": "failed", "Skipped": "skipped", "Incomplete": "skipped"}
_SECTION_STATUS = {
    "failure": TestStatus.FAILED,
    "error": TestStatus.ERROR,
    "skipped test": TestStatus.SKIPPED,
    "incomplete test": TestStatus.SKIPPED,
}


class PhpunitParser(RunnerParser):
    """Ids are `Class::method` as PHPUnit prints them in its sections (only non-passing tests are named)."""

    runner = "phpunit"
    family = "phpunit"
    command_pattern = re.compile(r"\bphpunit\b|\bpest\b|artisan test\b")
    failure_marker = re.compile(r"\n(?:FAILURES!|ERRORS!)(?=\n)|\nThere (?:was|were) \d++ (?:failure|error)")
    hints = ("PHPUnit ", "OK (", "Tests: ")
    marker_pattern = re.compile(r"\n(?:PHPUnit \d++\.\d|OK \(\d++ tests?, \d|Tests: \d++, Assertions: \d)")

    def parse(self, text: str, command: str = "") -> TestReport | None:
        text = framed(text)
        tests: dict[str, TestStatus] = {}
        sections = list(_SECTION.finditer(text))
        for index, section in enumerate(sections):
            status = _SECTION_STATUS.get(section.group(1))
            if status is None:  # risky tests and warnings ran and passed
                continue
            end = sections[index + 1].start() if index + 1 < len(sections) else len(text)
            for test in _NUMBERED.findall(text, section.end(), end):
                record(tests, test, status)
        totals: dict[str, int] | None = None
        closing = [(m.start(), {"total": bounded_int(m.group(1))}) for m in _OK.finditer(text)]
        for match in _TOTALS.finditer(text):
            run = {"total": bounded_int(match.group(1))}
            for item in match.group(2).split(", "):
                key, _, value = item.partition(": ")
                if key in _KEYS and value.isdigit():
                    run[_KEYS[key]] = run.get(_KEYS[key], 0) + bounded_int(value)
            closing.append((match.start(), run))
        for _, run in sorted(closing, key=lambda pair: pair[0]):
            totals = add_totals(totals, run)
        if totals is not None:
            totals["passed"] = totals["total"] - sum(totals.get(k, 0) for k in ("failed", "error", "skipped"))
        if not tests and totals is None:
            return None
        return closing_report(self.runner, tests, totals)
