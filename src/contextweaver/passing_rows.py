"""The rows of a test run that say only "this test passed": what a kept test output can drop first.

A test run's evidence is its failures, their tracebacks and the summary line; the per-test rows of
passing tests (pytest -v `PASSED`, go -v `=== RUN` / `--- PASS`, jest and mocha check marks, unittest
and cargo `... ok`, gradle `PASSED`, maven per-class clean counts) and the progress rows of dots are
the bulk of a verbose run and tell the next step nothing the summary does not. Lines are matched one
by one, whole (a row that also names a failure or an error is never a match), so the compressed form
is the original's other lines plus elision markers. Cheap: one anchored regex per line, once per output.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

PASSING_ROW = re.compile(
    r"(?:"
    r"\S+::\S.*? PASSED(?: +\[ *\d+%\])?"  # pytest -v
    r"|PASSED \S+::\S+"  # pytest -rA short summary
    r"|\S+\.py [.sx]+(?: +\[ *\d+%\])?|[.sx]+ +\[ *\d+%\]|\.{4,}"  # pytest progress rows with no F or E
    r"|(?:\S+\.py\[\d+\] )?\.+ +\[OK\]"  # sympy bin/test
    r"|=== (?:RUN|PAUSE|CONT|NAME) +\S+"  # go test -v
    r"|--- PASS: \S+ \([\d.]+ ?s\)"  # go test -v
    r"|[✓✔√] [^\n]*"  # jest, vitest, mocha
    r"|test\w* \([\w.]+\)[^\n]* \.\.\. ok"  # unittest / django -v 2
    r"|test \S+ \.\.\. ok"  # cargo test
    r"|\S+ > \S.* PASSED"  # gradle
    r"|(?:\[INFO\] )?Tests run: \d+, Failures: 0, Errors: 0, Skipped: \d+, Time elapsed: [^\n]* - in \S+"  # maven
    r"|(?:\[INFO\] )?Running [\w.$]+Test\w*"  # maven: the class line before its counts
    r")[ \t]*"
)
"""One line, whole (after its indent), that reports a passing test or progress with no failure."""
MAX_CHARS = 400
"""A longer line is not a test row (and is not worth matching)."""
MIN_ROWS = 8
"""Fewer passing rows than this are not a verbose run worth cutting (and may be prose)."""


def passing_rows(lines: Sequence[str]) -> frozenset[int]:
    """The numbers of the lines that only report passing tests; empty unless there are MIN_ROWS+ of them."""
    found = [
        n for n, line in enumerate(lines) if len(line) < MAX_CHARS and PASSING_ROW.fullmatch(line.strip())
    ]
    return frozenset(found) if len(found) >= MIN_ROWS else frozenset()
