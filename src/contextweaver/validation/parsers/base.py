"""The shape every runner parser shares: a cheap detector, then a parser that runs only when it fires."""

from __future__ import annotations

import json
import re
from typing import ClassVar

from contextweaver.validation.report import TestReport
from contextweaver.validation.text import bounded_int

__all__ = ["NEVER", "AsciiFast", "RunnerParser", "bounded_int", "counts_from", "framed", "json_string"]

NEVER = re.compile(r"(?!)")


_LAST_SEARCH: dict[re.Pattern[str], tuple[str, bool]] = {}
"""Per marker pattern, the last text searched and the answer: parsers sharing a marker (django and
unittest) scan a megabyte once, not twice."""


def marker_found(pattern: re.Pattern[str], text: str) -> bool:
    last = _LAST_SEARCH.get(pattern)
    if last is not None and last[0] is text:
        return last[1]
    found = bool(pattern.search(text))
    _LAST_SEARCH[pattern] = (text, found)
    return found


_SHORT_LINE = 12
"""Mean line length (characters) under which the hints are checked first."""
_LAST_SHORT: list[tuple[str, bool]] = []
"""The last text asked about and the answer: every parser asks about the same text in turn."""


def short_lined(text: str) -> bool:
    """Whether the text's lines are short on average (one count of newlines per text)."""
    if _LAST_SHORT and _LAST_SHORT[0][0] is text:
        return _LAST_SHORT[0][1]
    answer = len(text) < _SHORT_LINE * (text.count("\n") + 1)
    _LAST_SHORT[:] = [(text, answer)]
    return answer


class RunnerParser:
    """Detect a runner from anchored output markers (or its command), then parse its lines."""

    runner: ClassVar[str] = ""
    family: ClassVar[str] = ""
    """Parsers of one family read the same format; only the first that detects the output runs."""
    command_pattern: ClassVar[re.Pattern[str]] = NEVER
    marker_pattern: ClassVar[re.Pattern[str]] = NEVER
    failure_marker: ClassVar[re.Pattern[str]] = NEVER
    """A line only this runner prints when a test fails: when it is present, no other runner's clean
    summary in the same output is a pass."""
    passing_rows: ClassVar[tuple[str, ...]] = ()
    """Patterns of one whole line that only says a test passed (or shows progress with no failure): the
    rows a kept test output may drop first (`selectors/passing_rows.py` joins every parser's)."""
    crash_pattern: ClassVar[re.Pattern[str]] = NEVER
    """A line the runner prints when it stops before its first test (pytest's conftest that fails to
    import): with the runner's command and no test of its own, a failed run."""
    python_runner: ClassVar[bool] = False
    """The runner is a Python program: a traceback that ends its output is the runner's own crash."""
    hints: ClassVar[tuple[str, ...]] = ()
    """Plain substrings one of which every detectable output holds, checked before the regex on
    short-lined text, where a line-anchored pattern tried at every line start costs ten times a scan
    (on ordinary text the pattern is the cheaper of the two)."""

    def detect(self, text: str, command: str = "") -> bool:
        """Cheap: substring hints on short-lined text, then one regex over the framed text. The command
        alone never suffices."""
        if self.hints and short_lined(text) and not any(hint in text for hint in self.hints):
            return False
        return marker_found(self.marker_pattern, framed(text))

    def fails_in(self, text: str) -> bool:
        """Whether the framed text holds this runner's failure line (`failure_marker`)."""
        return bool(self.failure_marker.search(text))

    def command_matches(self, command: str) -> bool:
        return bool(command) and bool(self.command_pattern.search(command))

    def parse(self, text: str, command: str = "") -> TestReport | None:
        """Parse cleaned output (no ANSI, no envelope); None when nothing of this runner is there."""
        raise NotImplementedError


def counts_from(pairs: list[tuple[str, str]], names: dict[str, str]) -> dict[str, int]:
    """Turn ("3", "failed") pairs into totals, naming keys the project's way and summing repeats."""
    totals: dict[str, int] = {}
    for number, word in pairs:
        key = names.get(word.lower(), word.lower())
        totals[key] = totals.get(key, 0) + bounded_int(number)
    return totals


def json_string(body: str) -> str:
    """A JSON string literal's body decoded, else the raw body: an invalid escape (`\\q`) or an escaped
    lone surrogate (`\\ud800`, which no UTF-8 writer accepts) in a test name is the name as printed."""
    if "\\" not in body:
        return body
    try:
        value = json.loads(f'"{body}"')
    except ValueError:
        return body
    if not isinstance(value, str):
        return body
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return body
    return value


def framed(text: str) -> str:
    """The text between two newlines. Parsers anchor line starts on a literal "\\n" (not `^` with
    re.M), which the regex engine can search for fast; a line's end is then `(?=\\n)`."""
    if text.startswith("\n") and text.endswith("\n"):
        return text
    return f"\n{text}\n"


class AsciiFast:
    """A pattern compiled twice: as written, and with re.ASCII for text that is all ASCII, where the
    Unicode `\\w` classes cost several times more and match the same characters. Refused for patterns
    with `\\s`/`\\S` (Unicode `\\s` also matches \\x1c-\\x1f) or re.IGNORECASE, whose answers differ."""

    __slots__ = ("ascii", "unicode")

    def __init__(self, pattern: str) -> None:
        if "\\s" in pattern or "\\S" in pattern or "(?i" in pattern:
            raise ValueError("only for patterns that match ASCII text the same either way")
        self.unicode = re.compile(pattern)
        self.ascii = re.compile(pattern, re.ASCII)

    def on(self, text: str) -> re.Pattern[str]:
        """The pattern for `text` (str.isascii is a constant-time flag check)."""
        return self.ascii if text.isascii() else self.unicode
