"""The rows of a test run that say only "this test passed": what a kept test output can drop first.

A test run's evidence is its failures, their tracebacks and the summary line; the per-test rows of
passing tests (pytest -v `PASSED`, go -v `=== RUN` / `--- PASS`, jest and mocha check marks, unittest
and cargo `... ok`, gradle `PASSED`, maven per-class clean counts) and the progress rows of dots are
the bulk of a verbose run and tell the next step nothing the summary does not. Lines are matched one
by one, whole (a row that also names a failure or an error is never a match), so the compressed form
is the original's other lines plus elision markers. Each runner's parser owns its rows' patterns
(`passing_rows`); here they are joined into one anchored regex, matched per line, once per output.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

from contextweaver.validation.registry import PARSERS

MAX_CHARS = 400
"""A longer line is not a test row (and is not worth matching)."""
MIN_ROWS = 8
"""Fewer passing rows than this are not a verbose run worth cutting (and may be prose)."""


@cache
def passing_row() -> re.Pattern[str]:
    """One line, whole (after its indent), that any runner's parser says reports a passing test."""
    patterns = [p for name in PARSERS.names() for p in PARSERS.get(name).passing_rows]
    return re.compile("(?:" + "|".join(dict.fromkeys(patterns)) + r")[ \t]*")


def passing_rows(lines: Sequence[str]) -> frozenset[int]:
    """The numbers of the lines that only report passing tests; empty unless there are MIN_ROWS+ of them."""
    row = passing_row()
    matched: dict[str, bool] = {}  # a row printed again (a log's) is matched once
    found = []
    for n, line in enumerate(lines):
        hit = matched.get(line)
        if hit is None:
            hit = matched[line] = len(line) < MAX_CHARS and row.fullmatch(line.strip()) is not None
        if hit:
            found.append(n)
    return frozenset(found) if len(found) >= MIN_ROWS else frozenset()
