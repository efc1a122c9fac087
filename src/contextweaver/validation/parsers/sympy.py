"""sympy's bin/test: per-file progress lines, `___ file:test ___` failure blocks, `tests finished:` totals."""

from __future__ import annotations

import re

from contextweaver.types import TestStatus
from contextweaver.validation.parsers.base import RunnerParser, counts_from, framed
from contextweaver.validation.report import TestReport, merge_reports, record

_START = re.compile(r"\n=+ test process starts =+(?=\n)")
_FINISHED = re.compile(r"\n=+ tests finished: (.*?),? in [\d.]+ seconds =+(?=\n)")
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

    runner = "sympy"
    family = "sympy"
    command_pattern = re.compile(r"\bbin/test\b|sympy\.test\(|\bsympy/testing/runtests")
    failure_marker = re.compile(r"\[FAIL\](?=\n)|\n=+ tests finished: [^\n]*?\b[1-9]\d* (?:failed|exceptions?)")
    marker_pattern = re.compile(r"\n=+ test(?: process starts =+(?=\n)|s finished: )")

    def parse(self, text: str, command: str = "") -> TestReport | None:
        text = framed(text)
        starts = [m.start() for m in _START.finditer(text)] or [0]
        if starts[0] > 0 and _FINISHED.search(text, 0, starts[0] + 1):
            starts.insert(0, 0)
        bounds = zip(starts, [*starts[1:], len(text)], strict=True)
        return merge_reports(self._run(text, start, end) for start, end in bounds)

    def _run(self, text: str, start: int, end: int) -> TestReport:
        end = min(end + 1, len(text))  # the run's last line ends at the newline that starts the next run
        tests: dict[str, TestStatus] = {}
        blocks = list(_BLOCK.finditer(text, start, end))
        for index, block in enumerate(blocks):
            body_end = blocks[index + 1].start() if index + 1 < len(blocks) else end
            finished = _FINISHED.search(text, block.end(), body_end + 1)
            body = text[block.end() : finished.start() if finished else body_end] + "\n"
            record(tests, f"{block.group(1)}::{block.group(2)}", _status_of(body))
        finishes = list(_FINISHED.finditer(text, start, end))
        finished = finishes[-1] if finishes else None
        pairs = [pair for line in finishes for pair in _COUNT.findall(line.group(1))]
        totals = counts_from(pairs, _NAMES) if finishes else None
        failed = bool(totals and (totals.get("failed", 0) or totals.get("error", 0)))
        failed = failed or text.find("[FAIL]", start, end) >= 0 or bool(tests)
        return TestReport(
            runner=self.runner,
            tests=tests,
            totals=totals,
            complete=finished is not None,
            failed_signal=failed,
            passed_scopes=_clean_files(text, start, end) if finished else frozenset(),
        )


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
