"""ValidationDetector: a node's label from parsed results, anchored to the runners' own formats."""

from __future__ import annotations

import re
from dataclasses import dataclass

from contextweaver.records import ValidationStatus
from contextweaver.validation.observation import detects, parsers_in_order
from contextweaver.validation.parsers.base import framed
from contextweaver.validation.report import TestReport
from contextweaver.validation.text import CleanText

_PYTHON_SCRIPT = re.compile(r"(?:^|[\s;&|(])python[\d.]*\s+(?!-m\s)(?:-[^\s]+\s+)*(?:-c\s|\S+\.py\b)")
_TRACEBACK = re.compile(r"^Traceback \(most recent call last\):$", re.M)
_EXCEPTION_LAST = re.compile(
    r"^(?:[A-Za-z_][\w.]*\.)?([A-Z]\w*(?:Error|Exception|Exit|Interrupt))\b(?::.*)?$"
)


@dataclass(frozen=True)
class Label:
    """The detector's decision and a reason a person can read."""

    status: ValidationStatus
    reason: str


def _names(tests: list[str], limit: int = 3) -> str:
    shown = ", ".join(tests[:limit])
    return shown + (f", +{len(tests) - limit} more" if len(tests) > limit else "")


class ValidationDetector:
    """Labels: failed on a parsed failure or the runner's failure signal; passed only on a complete,
    all-passing run; unknown otherwise. Truncation without the closing totals is never a pass."""

    def label(self, report: TestReport | None, clean: CleanText, command: str) -> Label:
        if report is None:
            return self._without_runner(clean, command)
        if report.failures or report.has_failure:
            return _failed(report)
        if not report.complete and not report.tests:
            crash = runner_crash(clean, command)
            if crash:
                return Label(ValidationStatus.FAILED, crash)
        if not report.complete:
            return Label(
                ValidationStatus.UNKNOWN, f"{report.runner}: totals line missing (output truncated?)"
            )
        foreign = foreign_failure(clean.text, command)
        if foreign:
            return Label(
                ValidationStatus.UNKNOWN, f"{report.runner}: passed, but a {foreign} failure line is present"
            )
        totals = report.totals or {}
        passed = sum(1 for s in report.tests.values() if s.value == "passed") or totals.get("passed", 0)
        ran = passed or totals.get("total", 0) - totals.get("skipped", 0)
        if ran <= 0:
            return Label(ValidationStatus.UNKNOWN, f"{report.runner}: no test ran")
        return Label(ValidationStatus.PASSED, f"{report.runner}: {passed or ran} passed")

    def _without_runner(self, clean: CleanText, command: str) -> Label:
        """A Python script that ends in an uncaught traceback with a nonzero exit code failed."""
        exception = python_script_crash(clean, command)
        if exception:
            return Label(ValidationStatus.FAILED, f"python script raised {exception}")
        crash = runner_crash(clean, command)
        if crash:
            return Label(ValidationStatus.FAILED, crash)
        return Label(ValidationStatus.UNKNOWN, "no test-runner output")


def _failed(report: TestReport) -> Label:
    """A failed run's label: the counts or the failing tests' names, the runner's own reason, and
    whether the closing totals are missing."""
    failures = report.failures
    totals = report.totals or {}
    failed = totals.get("failed", 0)
    errors = totals.get("error", 0)
    parts = []
    if failed or errors:
        parts.append(f"{failed} failed" + (f", {errors} error" if errors else ""))
    elif failures:
        parts.append(f"{len(failures)} failed")
    else:
        parts.append(report.reason or "runner reported failure")
    if failures:
        parts[-1] += f" ({_names(failures)})"
        if report.reason:
            parts.append(report.reason)
    if not report.complete:
        parts.append("totals line missing")
    return Label(ValidationStatus.FAILED, f"{report.runner}: {'; '.join(parts)}")


def foreign_failure(text: str, command: str) -> str | None:
    """The runner, not detected in this output, whose failure line is in it (a lone failure of one runner
    beside another runner's passing summary)."""
    text = framed(text)
    for parser in parsers_in_order():
        if parser.fails_in(text) and not detects(parser, text, command):
            return parser.runner
    return None


def runner_crash(clean: CleanText, command: str) -> str | None:
    """Why a runner the command names stopped before its first test, or None: its own crash line
    (`crash_pattern`) or, for a Python runner, a traceback that ends the output. An exit code of 0 says
    it did not crash."""
    if clean.returncode == 0 or not command:
        return None
    text = framed(clean.text)
    for parser in parsers_in_order():
        if not parser.command_matches(command):
            continue
        if parser.crash_pattern.search(text):
            return f"{parser.runner}: stopped before its first test ({last_exception(clean.text) or 'see its output'})"
        if parser.python_runner and (exception := final_exception(clean.text)):
            return f"{parser.runner}: crashed before its first test ({exception})"
    return None


def last_exception(text: str, lines: int = 60) -> str | None:
    """The last exception line (`E   ImportError: ...` as pytest quotes it, or bare) among the output's
    last lines."""
    for line in reversed(text[-20_000:].splitlines()[-lines:]):
        line = line[1:].strip() if line.startswith("E ") else line.strip()
        if _EXCEPTION_LAST.match(line):
            return _shown(line)
    return None


def final_exception(text: str) -> str | None:
    """The exception line that ends the output when the output's last traceback runs to its end."""
    start = text.rfind("Traceback (most recent call last):")
    if start < 0 or not _TRACEBACK.search(text, start):
        return None
    tail = text[start:].rstrip().splitlines()
    if len(tail) < 2:
        return None
    return _shown(tail[-1]) if _EXCEPTION_LAST.match(tail[-1]) else None


def _shown(line: str, limit: int = 160) -> str:
    return line if len(line) <= limit else line[: limit - 1] + "…"


def python_script_crash(clean: CleanText, command: str) -> str | None:
    """The rule: the command runs `python <file>.py` or `python -c`, the exit code is known and nonzero,
    and the output's last traceback ends the output with its exception line. Returns the exception name."""
    if clean.returncode in (None, 0) or not _PYTHON_SCRIPT.search(command):
        return None
    tracebacks = list(_TRACEBACK.finditer(clean.text))
    if not tracebacks:
        return None
    tail = clean.text[tracebacks[-1].end() :].rstrip().splitlines()
    if not tail:
        return None
    match = _EXCEPTION_LAST.match(tail[-1])
    return match.group(1) if match else None
