"""Maven Surefire/Failsafe console: per-class `Tests run:` lines, `<<< FAILURE!` tests, Results totals."""

from __future__ import annotations

import re

from contextweaver.records import TestStatus
from contextweaver.validation.parsers.base import RunnerParser, bounded_int, framed
from contextweaver.validation.report import TestReport, closing_report, record

_PREFIX = r"\n(?:\[(?:INFO|ERROR|WARNING|WARN)\] )?"
_CLASS_LINE = re.compile(
    _PREFIX + r"Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+), Time elapsed: [^\n]*?"
    r"(?:-|<<< \w+! -) in (\S+)(?=\n)"
)
_TOTALS = re.compile(
    _PREFIX + r"Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)[^\S\n]*(?=\n)"
)
_TEST_FAILURE = re.compile(
    _PREFIX
    + r"([^\s(]++)(?:\(([^\s)]++)\))?(?: --)?[ \t]++Time elapsed: [\d.,]++ s(?:ec)?[ \t]++<<< (FAILURE|ERROR)!"
)
_RESULTS = re.compile(_PREFIX + r"Results ?:")
_BUILD = re.compile(_PREFIX + r"BUILD (SUCCESS|FAILURE)(?=\n)")
_COMPILATION_ERROR = re.compile(_PREFIX + r"COMPILATION ERROR")
_GOAL_FAILED = re.compile(
    r"\n\[ERROR\] Failed to execute goal [^\n]*?: (Compilation failure|No tests were executed!)"
)
"""Maven's closing error for a build that never ran a test (Maven 3.9 prints no COMPILATION ERROR banner
when the compiler's messages are quiet); either is a failed run."""
_GOAL_IDS = {"Compilation failure": "[compilation error]", "No tests were executed!": "[no tests executed]"}


class MavenParser(RunnerParser):
    """Surefire names only failing tests; a class whose line shows no failure is a passed scope."""

    passing_rows = (
        r"(?:\[INFO\] )?Tests run: \d+, Failures: 0, Errors: 0, Skipped: \d+, Time elapsed: [^\n]* - in \S+",
        r"(?:\[INFO\] )?Running [\w.$]+Test\w*",
    )
    runner = "maven"
    family = "maven"
    command_pattern = re.compile(r"\bmvnw?\b|\bmaven\b")
    failure_marker = re.compile(
        r"<<< (?:FAILURE|ERROR)!|BUILD FAILURE|Tests run: \d++, Failures: (?:[1-9]|\d++, Errors: [1-9])"
    )
    hints = ("Tests run: ", " T E S T S")
    marker_pattern = re.compile(
        _PREFIX + r"(?:Tests run: \d+, Failures: \d+, Errors: \d+, Skipped: \d+| T E S T S(?=\n))"
    )

    def detect(self, text: str, command: str = "") -> bool:
        if super().detect(text, command):
            return True
        if "<<< " in text and _TEST_FAILURE.search(framed(text)):  # a failing test whose totals were cut
            return True
        if "Failed to execute goal" in text and _GOAL_FAILED.search(framed(text)):
            return True
        return self.command_matches(command) and bool(_COMPILATION_ERROR.search(framed(text)))

    def parse(self, text: str, command: str = "") -> TestReport | None:
        text = framed(text)
        tests: dict[str, TestStatus] = {}
        for match in _TEST_FAILURE.finditer(text) if "<<< " in text else ():
            name, owner, kind = match.group(1), match.group(2), match.group(3)
            test_id = f"{owner}.{name}" if owner else name
            record(tests, test_id, TestStatus.FAILED if kind == "FAILURE" else TestStatus.ERROR)
        clean: set[str] = set()
        failed = False
        for match in _CLASS_LINE.finditer(text):
            ran, failures, errors, _skipped = (bounded_int(g) for g in match.groups()[:4])
            failed |= failures + errors > 0
            if ran and not failures and not errors and not _skipped:
                clean.add(match.group(5))
        totals: dict[str, int] | None = None
        results = _RESULTS.search(text)
        if results:
            for match in _TOTALS.finditer(text, results.end()):
                run = dict(
                    zip(
                        ("total", "failed", "error", "skipped"),
                        (bounded_int(g) for g in match.groups()),
                        strict=True,
                    )
                )
                totals = {key: (totals or {}).get(key, 0) + value for key, value in run.items()}
        builds = _BUILD.findall(text)
        compile_error = bool(_COMPILATION_ERROR.search(text))
        if compile_error:
            record(tests, "[compilation error]", TestStatus.ERROR)
        for goal in _GOAL_FAILED.findall(text) if "Failed to execute goal" in text else ():
            record(tests, _GOAL_IDS[goal], TestStatus.ERROR)
            compile_error = True
        if not tests and totals is None and not clean and not _CLASS_LINE.search(text):
            return None
        return closing_report(
            self.runner,
            tests,
            totals,
            failed=failed or compile_error,
            complete=bool(builds),
            passed_scopes=frozenset(clean),
        )
