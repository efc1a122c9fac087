"""vitest: `FAIL  file > describe > test` lines, the `Test Files` and `Tests  1 failed | 4 passed (5)` totals."""

from __future__ import annotations

import re

from contextweaver.records import TestStatus
from contextweaver.validation.parsers.base import RunnerParser, bounded_int, framed
from contextweaver.validation.report import TestReport, add_totals, closing_report, record

_TESTS = re.compile(r"\n {0,8}Tests  ++([^\n(]*+)\((\d++)\)")
_FILES = re.compile(r"\n {0,8}Test Files  ++([^\n(]*+)\(\d++\)")
_COUNT = re.compile(r"(\d++) (passed|failed|skipped|todo)")
_FAILED = re.compile(r"\n {0,2}FAIL  ++(\S[^\n]*+)")
"""The failed-test list; a `file > describe > test` id, or a file alone when the file failed to run."""
_NAMES = {"todo": "skipped"}


class VitestParser(RunnerParser):
    """Ids are vitest's own `file > describe > test`; passing tests are counted, not named."""

    passing_rows = (r"[✓✔√] [^\n]*",)
    runner = "vitest"
    family = "vitest"
    command_pattern = re.compile(r"\bvitest\b")
    failure_marker = re.compile(r"\n {0,8}Tests  ++[^\n]*?\b[1-9]\d* failed")
    hints = ("Test Files ", " RUN  v")
    marker_pattern = re.compile(r"\n(?: {0,8}Test Files  ++\d++ (?:passed|failed|skipped)| RUN  v\d)")

    def parse(self, text: str, command: str = "") -> TestReport | None:
        text = framed(text)
        tests: dict[str, TestStatus] = {}
        for line in _FAILED.findall(text):
            test = line.rstrip()
            if test.endswith("]") and " [" in test:  # a project name: `FAIL  file > test [chromium]`
                test = test.rsplit(" [", 1)[0]
            record(tests, test, TestStatus.ERROR if " > " not in test else TestStatus.FAILED)
        totals: dict[str, int] | None = None
        for counts, total in _TESTS.findall(text):
            run: dict[str, int] = {"total": bounded_int(total)}
            for number, word in _COUNT.findall(counts):
                key = _NAMES.get(word, word)
                run[key] = run.get(key, 0) + bounded_int(number)
            totals = add_totals(totals, run)
        files_failed = any("failed" in counts for counts in _FILES.findall(text))
        if not tests and totals is None and not files_failed:
            return None
        return closing_report(self.runner, tests, totals, failed=files_failed)
