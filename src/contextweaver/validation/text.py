"""Observations as agents see them: envelopes, truncation markers, ANSI colours, carriage returns."""

from __future__ import annotations

import re
from dataclasses import dataclass

_ANSI = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_RETURNCODE = re.compile(
    r"<returncode>\s*(-?\d+)\s*</returncode>|\[The command completed with exit code (-?\d+)\.?\]"
)
_ENVELOPE_TAG = re.compile(r"</?(?:returncode|output|output_head|output_tail|stdout|stderr)>")
_WARNING_BLOCK = re.compile(r"<warning>.*?</warning>", re.DOTALL)
_ELIDED_BLOCK = re.compile(r"<elided_chars>.*?</elided_chars>", re.DOTALL)
_ELISION_MARKER = re.compile(
    r"(?im)^[^\S\n]*(?:<elided_chars>|<response clipped>|\.{3}[^\n]{0,40}\b(?:elided|truncated|omitted)\b"
    r"|\[[^\]\n]{0,60}\b(?:elided|truncated|omitted)\b[^\]\n]{0,60}\]"
    r"|\(?\d+ (?:characters?|chars|lines|bytes) (?:elided|truncated|omitted)\b)"
)


_ELISION_WORDS = ("elided", "truncated", "omitted", "clipped", "Elided", "Truncated", "Omitted", "TRUNCATED")


@dataclass(frozen=True)
class CleanText:
    """The observation's program output, cleaned, with what the envelope told us."""

    text: str
    truncated: bool
    returncode: int | None


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


def clean_observation(observation: str) -> CleanText:
    """Unwrap the agent envelope and normalise the terminal noise; keep truncation as a flag."""
    returncode = None
    match = _RETURNCODE.search(observation, 0, 4096) or _RETURNCODE.search(observation)
    if match:
        returncode = int(match.group(1) or match.group(2))
    truncated = any(word in observation for word in _ELISION_WORDS) and bool(
        _ELISION_MARKER.search(observation)
    )
    text = observation
    if "<" in text:
        text = _WARNING_BLOCK.sub("", text) if "<warning>" in text else text
        text = _ELIDED_BLOCK.sub("\n", text) if "<elided_chars>" in text else text
        text = _RETURNCODE.sub("", text)
        text = _ENVELOPE_TAG.sub("\n", text)
    text = resolve_carriage_returns(strip_ansi(text))
    return CleanText(text=text, truncated=truncated, returncode=returncode)
