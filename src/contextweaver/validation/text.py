"""Observations as agents see them: envelopes, truncation markers, ANSI colours, carriage returns."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

_ANSI = re.compile(r"\x1b(?:\[[0-9;?]*+[ -/]*+[@-~]|\][^\x07\x1b]*+(?:\x07|\x1b\\)|[@-Z\\-_])")
"""Possessive: the parameter, intermediate and final byte classes are disjoint, so an unterminated
sequence fails at once instead of retrying every shorter split."""
_RETURNCODES = (
    re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>"),
    re.compile(r"\[The command completed with exit code (-?\d+)\.?\]"),
)
"""Two patterns, each with a literal prefix the regex engine finds fast (an alternation has none)."""
_ENVELOPE_TAG = re.compile(r"</?(?:returncode|output|output_head|output_tail|stdout|stderr)>")
_WARNING_BLOCK = re.compile(r"<warning>.*?</warning>", re.DOTALL)
_ELIDED_BLOCK = re.compile(r"<elided_chars>.*?</elided_chars>", re.DOTALL)
_ELISION_MARKER = re.compile(
    r"(?im)^[^\S\n]*(?:<elided_chars>|<response clipped>|\.{3}[^\n]{0,40}\b(?:elided|truncated|omitted)\b"
    r"|\[[^\]\n]{0,60}\b(?:elided|truncated|omitted)\b[^\]\n]{0,60}\]"
    r"|\(?\d+ (?:characters?|chars|lines|bytes) (?:elided|truncated|omitted)\b)"
)


MAX_PARSED_CHARS = 2_000_000
"""The parse cap per observation: a longer output is parsed as its head and tail (a runner's closing
lines are at the end), so one huge tool output cannot hold the agent step, or the proxy, for long."""
_HEAD_SHARE = 4
"""The head keeps a quarter of the cap, the tail the rest."""

_ELISION_WORDS = ("elided", "truncated", "omitted", "clipped", "Elided", "Truncated", "Omitted", "TRUNCATED")


@dataclass(frozen=True)
class CleanText:
    """The observation's program output, cleaned, with what the envelope told us."""

    text: str
    returncode: int | None
    raw: str = field(default="", repr=False)

    @cached_property
    def truncated(self) -> bool:
        """Computed on demand: few callers need it and it costs several scans of the observation."""
        return has_elision_marker(self.raw)


def strip_ansi(text: str) -> str:
    """Colour codes split the runners' anchors (pytest colours every summary word)."""
    return _ANSI.sub("", text) if "\x1b" in text else text


def resolve_carriage_returns(text: str) -> str:
    """A terminal shows only what follows the last carriage return of a line."""
    if "\r" not in text:
        return text
    text = text.replace("\r\n", "\n")
    if "\r" not in text:
        return text
    return "\n".join(line.rsplit("\r", 1)[-1] if "\r" in line else line for line in text.split("\n"))


def has_elision_marker(observation: str) -> bool:
    """An agent's truncation marker on some line: only the lines holding one of the words are checked."""
    for word in _ELISION_WORDS:
        at = observation.find(word)
        while at >= 0:
            start = observation.rfind("\n", 0, at) + 1
            end = observation.find("\n", at)
            end = len(observation) if end < 0 else end
            if _ELISION_MARKER.search(observation, start, end):
                return True
            at = observation.find(word, end)
    return False


MAX_COUNT = 10**9
"""The largest count or exit code read from output: no real run prints more."""


def bounded_int(digits: str) -> int:
    """A printed number (`\\d+`, maybe signed) clamped to ±MAX_COUNT: CPython's int() refuses 4,300+
    digits with ValueError, and one totals line must not stop the step."""
    sign = -1 if digits.startswith("-") else 1
    body = digits.lstrip("+-").lstrip("0") or "0"
    return sign * (int(body) if len(body) <= 9 else MAX_COUNT)


def _returncode(observation: str) -> int | None:
    """The first exit code the envelope states (either agent's style)."""
    found = [match for pattern in _RETURNCODES if (match := pattern.search(observation))]
    if not found:
        return None
    first = min(found, key=lambda match: match.start())
    return bounded_int(first.group(1))


def clean_observation(observation: str) -> CleanText:
    """Unwrap the agent envelope and normalise the terminal noise; truncation is read on demand."""
    returncode = _returncode(observation)
    text = observation
    if "<" in text:
        text = _WARNING_BLOCK.sub("", text) if "<warning>" in text else text
        text = _ELIDED_BLOCK.sub("\n", text) if "<elided_chars>" in text else text
        if returncode is not None:
            for pattern in _RETURNCODES:
                text = pattern.sub("", text)
        text = _ENVELOPE_TAG.sub("\n", text)
    text = capped(resolve_carriage_returns(strip_ansi(text)))
    return CleanText(text=text, returncode=returncode, raw=observation)


def capped(text: str, limit: int = MAX_PARSED_CHARS) -> str:
    """The text, or its head and tail around a line saying how much was left out (cut at line ends)."""
    if len(text) <= limit:
        return text
    head_end = text.rfind("\n", 0, limit // _HEAD_SHARE) + 1
    tail_start = text.find("\n", len(text) - (limit - limit // _HEAD_SHARE))
    tail_start = len(text) - (limit - limit // _HEAD_SHARE) if tail_start < 0 else tail_start
    left_out = tail_start - head_end
    return f"{text[:head_end]}\n[... {left_out} characters not parsed ...]\n{text[tail_start:]}"
