"""Faithful compressed forms of kept outputs: whole lines of the original plus markers naming the cut.

An excerpt keeps a chosen set of an output's lines verbatim, in order, and replaces every run of cut
lines with one marker saying which output lines were elided and why, so the agent can re-read them.
Nothing is synthesized: no keyword lists, no paraphrase. Each node's lines, their token counts and a
word -> lines index are computed once (`OutputLines.of`), so building an excerpt later costs only
the kept lines.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass

from contextweaver.render import is_observation, placeholder
from contextweaver.tokens import MESSAGE_OVERHEAD, content_text, count_message, count_text
from contextweaver.types import Message, Node

WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
"""Identifier-like words of 4+ characters: what recent steps mention and old outputs are searched for."""
MARKER = "[... output lines {start}-{end} of {total} elided: {why} ...]"
MIN_DEDUPE_CHARS = 8
"""Shorter lines (blank, `}`, `else:`) are never elided as repeats: they carry nothing."""


@dataclass(frozen=True)
class OutputLines:
    """An agent step's output split into lines (across its observation messages), indexed once."""

    lines: tuple[str, ...]
    owner: tuple[int, ...]
    """Position in `step.chat_messages()` of the observation message each line belongs to."""
    tokens: tuple[int, ...]
    words: dict[str, tuple[int, ...]]
    """Word -> the lines it occurs on."""
    call_tokens: int
    """Tokens of the step's other messages (the call), which an excerpt keeps whole."""
    spans: dict[int, tuple[int, int]]
    """Message position -> its lines as [first, end)."""

    @classmethod
    def of(cls, node: Node) -> OutputLines:
        lines: list[str] = []
        owner: list[int] = []
        call_tokens = 0
        spans: dict[int, tuple[int, int]] = {}
        for position, message in enumerate(node.step.chat_messages()):
            if not is_observation(node.step, message):
                call_tokens += count_message(message)
            else:
                split = content_text(message.get("content")).split("\n")
                spans[position] = (len(lines), len(lines) + len(split))
                lines += split
                owner += [position] * len(split)
        words: dict[str, list[int]] = {}
        for number, line in enumerate(lines):
            for word in set(WORD.findall(line)):
                words.setdefault(word, []).append(number)
        tokens = tuple(count_text(line) + 1 for line in lines) if lines else ()
        return cls(
            tuple(lines), tuple(owner), tokens, {w: tuple(n) for w, n in words.items()}, call_tokens, spans
        )

    def key(self, number: int) -> str | None:
        """The line as a repeat-detection key, or None when it is too short to count."""
        stripped = self.lines[number].strip()
        return stripped if len(stripped) >= MIN_DEDUPE_CHARS else None


@dataclass(frozen=True)
class Excerpt:
    """A step's messages with each observation cut to the kept lines, and their token count."""

    messages: list[Message]
    tokens: int
    kept: int
    total: int
    why: str


def runs_of(numbers: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted line numbers as inclusive (first, last) runs."""
    out: list[tuple[int, int]] = []
    for n in sorted(numbers):
        if out and n == out[-1][1] + 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out


def build_excerpt(node: Node, lines: OutputLines, keep: set[int], why: str) -> Excerpt:
    """The node's messages with observation lines outside `keep` replaced by markers (1-based numbers)."""
    total = len(lines.lines)
    tokens = lines.call_tokens
    messages: list[Message] = []
    kept = sorted(keep)
    for position, message in enumerate(node.step.chat_messages()):
        span = lines.spans.get(position)
        if span is None:
            messages.append(dict(message))
            continue
        first, end = span
        parts: list[str] = []
        cursor = first
        for n in kept[bisect_left(kept, first) : bisect_left(kept, end)]:
            if cursor < n:
                parts.append(MARKER.format(start=cursor + 1, end=n, total=total, why=why))
                tokens += count_text(parts[-1]) + 1
            parts.append(lines.lines[n])
            tokens += lines.tokens[n]
            cursor = n + 1
        if parts and cursor < end:
            parts.append(MARKER.format(start=cursor + 1, end=end, total=total, why=why))
            tokens += count_text(parts[-1]) + 1
        text = "\n".join(parts) if parts else placeholder(message.get("content"))
        tokens += MESSAGE_OVERHEAD + (0 if parts else count_text(text))
        messages.append({**message, "content": text})
    return Excerpt(messages, tokens, len(keep), total, why)
