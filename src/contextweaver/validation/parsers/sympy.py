"""sympy's bin/test: per-file progress lines, `___ file:test ___` failure blocks, `tests finished:` totals."""

from __future__ import annotations

import re

from contextweaver.records import TestStatus
from contextweaver.validation.parsers.base import RunnerParser, counts_from, framed
from contextweaver.validation.report import TestReport, merge_reports, record

_START = re.compile(r"\n=+ test process starts =+(?=\n)")
_FINISHED = re.compile(r"\n(?:=+ | )tests finished: ([^\n]*+)(?:\n([^\n]*+))?")
"""The closing line, centred in `=` padding; one longer than the terminal is wrapped over two lines and
printed without padding. Its counts end at `in N seconds` (see _finishes)."""
_IN_SECONDS = re.compile(r"(?:,? |^)in [\d.]+ seconds(?: =+| *)$")
_VERBOSE_LINE = re.compile(r"\n(?:(\S+\.(?:py|rst|md|txt))\[\d+\](?=[ \n])|(test_\w++) ([^\n]*+))")
"""--verbose: a file's header, then one `test_x ok` line per test (the file's last also holds [OK]). A
skipped test's line holds the skip's message before its letter (`test_x Slow w`, `test_y needs numpy s`),
or after it in older sympy (`test_y s - needs numpy`); `T` is a timeout, which sympy counts as skipped
(one raised as an exception also has its failure block, which makes it an error)."""
_VERBOSE_STATUS = {
    "ok": TestStatus.PASSED,
    "F": TestStatus.FAILED,
    "E": TestStatus.ERROR,
    "T": TestStatus.SKIPPED,
    "f": TestStatus.XFAIL,
    "X": TestStatus.XPASS,
    "s": TestStatus.SKIPPED,
    "K": TestStatus.SKIPPED,
    "w": TestStatus.SKIPPED,
}
_COUNT = re.compile(r"(\d+) (passed|failed|skipped|expected to fail but passed|expected to fail|exceptions?)")
_FILE_LINE = r"\n(\S+\.(?:py|rst|md|txt))\[\d+\] ?([.FEfXswTK]*+)[^\S\n]*+"
_FILE_CLOSED = re.compile(_FILE_LINE + r"\[(OK|FAIL)\](?=\n)")
_FILE_OPEN = re.compile(_FILE_LINE + r"(?=\n)")
"""A file's progress line, closed by its verdict on the same line (the usual case, read in bulk) or
continued on later lines until an `[OK]`/`[FAIL]` line."""
_CONTINUATION = re.compile(r"\n([.FEfXswTK]++)?[^\S\n]*+\[(OK|FAIL)\](?=\n)")
_BLOCK = re.compile(r"\n_{20,}\n[_ ]*?(\S+\.\w+):(\w+)[_ ]*(?=\n)")
_EXCEPTION_LINE = re.compile(r"\n([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)?)(?=[:\n])")
_NAMES = {
    "expected to fail": "xfail",
    "expected to fail but passed": "xpass",
    "exceptions": "error",
    "exception": "error",
}


class SympyParser(RunnerParser):
    """sympy counts an AssertionError as failed and any other exception as an exception (error)."""

    passing_rows = (r"(?:\S+\.py\[\d+\] )?\.+ +\[OK\]",)
    runner = "sympy"
    family = "sympy"
    python_runner = True
    command_pattern = re.compile(r"\bbin/test\b|sympy\.test\(|\bsympy/testing/runtests")
    failure_marker = re.compile(
        r"\[FAIL\](?=\n)|\n=+ tests finished: [^\n]*?\b[1-9]\d* (?:failed|exceptions?)"
    )
    hints = ("tests finished: ", "test process starts")
    marker_pattern = re.compile(r"\n(?:=+ test(?: process starts =+(?=\n)|s finished: )| tests finished: )")

    def parse(self, text: str, command: str = "") -> TestReport | None:
        text = framed(text)
        starts = [m.start() for m in _START.finditer(text)] or [0]
        if starts[0] > 0 and _finishes(text, 0, starts[0] + 1):
            starts.insert(0, 0)
        bounds = zip(starts, [*starts[1:], len(text)], strict=True)
        return merge_reports(self._run(text, start, end) for start, end in bounds)

    def _run(self, text: str, start: int, end: int) -> TestReport:
        end = min(end + 1, len(text))  # the run's last line ends at the newline that starts the next run
        tests: dict[str, TestStatus] = {}
        blocks = list(_BLOCK.finditer(text, start, end))
        for index, block in enumerate(blocks):
            body_end = blocks[index + 1].start() if index + 1 < len(blocks) else end
            closing = _finishes(text, block.end(), body_end + 1)
            body = text[block.end() : closing[0][0] if closing else body_end] + "\n"
            record(tests, f"{block.group(1)}::{block.group(2)}", _status_of(body))
        if "\ntest_" in text:
            _verbose(text, start, end, tests)
        finishes = _finishes(text, start, end)
        finished = finishes[-1] if finishes else None
        pairs = [pair for _, counts in finishes for pair in _COUNT.findall(counts)]
        totals = counts_from(pairs, _NAMES) if finishes else None
        failed = bool(totals and (totals.get("failed", 0) or totals.get("error", 0)))
        # a failure block is a failed or errored test; --verbose lines also name the tests that passed
        failed = failed or text.find("[FAIL]", start, end) >= 0 or bool(blocks)
        return TestReport(
            runner=self.runner,
            tests=tests,
            totals=totals,
            complete=finished is not None,
            failed_signal=failed,
            passed_scopes=_clean_files(text, start, end) if finished else frozenset(),
        )


def _finishes(text: str, start: int, end: int) -> list[tuple[int, str]]:
    """Each closing line's position and counts (a wrapped one's two lines joined)."""
    found = []
    for match in _FINISHED.finditer(text, start, end):
        first, second = match.group(1), match.group(2)
        closing = _IN_SECONDS.search(first)
        if closing is not None:
            found.append((match.start(), first[: closing.start()]))
        elif second is not None and (closing := _IN_SECONDS.search(second)) is not None:
            found.append((match.start(), f"{first} {second[: closing.start()]}"))
    return found


def _verbose(text: str, start: int, end: int, tests: dict[str, TestStatus]) -> None:
    """Per-test lines of --verbose: the status is the line's last word before a file's [OK]/[FAIL]."""
    file = ""
    for header, name, rest in _VERBOSE_LINE.findall(text, start, end):
        if header:
            file = header
            continue
        words = rest.replace("[OK]", "").replace("[FAIL]", "").split()
        status = _VERBOSE_STATUS.get(words[-1]) if words else None
        if status is None and len(words) > 1 and words[1] == "-":  # older sympy: `test_x s - message`
            status = _VERBOSE_STATUS.get(words[0])
        if status is not None and file:
            record(tests, f"{file}::{name}", status)


def _status_of(body: str) -> TestStatus:
    """The last exception line of the block's traceback decides: AssertionError fails, others error."""
    last = ""
    for match in _EXCEPTION_LINE.finditer(body):
        last = match.group(1)
    return TestStatus.FAILED if last.endswith("AssertionError") or not last else TestStatus.ERROR


def _clean_files(text: str, start: int, end: int) -> frozenset[str]:
    """Files ending in [OK] whose progress shows only passes."""
    clean = {
        file
        for file, chars, verdict in _FILE_CLOSED.findall(text, start, end)
        if verdict == "OK" and not chars.strip(".")
    }
    closing: re.Match[str] | None = None
    for match in _FILE_OPEN.finditer(text, start, end):
        if closing is None or closing.start() < match.end():  # one search serves every line before it
            closing = _CONTINUATION.search(text, match.end(), end)
            if closing is None:
                break
        if closing.group(2) != "OK" or closing.start() - match.end() > 20000:
            continue
        chars = match.group(2) + text[match.end() : closing.start()] + (closing.group(1) or "")
        if set(chars.replace("\n", "").replace(" ", "")) <= {"."}:
            clean.add(match.group(1))
    return frozenset(clean)
