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
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import accumulate

from contextweaver.nodes.extract import cached_extraction
from contextweaver.nodes.render import is_observation, json_output, output_lines, placeholder
from contextweaver.records import Message, Node
from contextweaver.tokens import MESSAGE_OVERHEAD, content_text, count_message, count_text

WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
"""Identifier-like words of 4+ characters: what recent steps mention and old outputs are searched for."""
MARKER = "[lines {start}-{end} cut{handle}]"
"""Short on purpose: it says which lines were cut (the agent can print them again); why is in the decision.
In a numbered view (`nl -ba`, `cat -n`, `grep -n`) the numbers are the ones its lines carry: those are
the lines the agent would print again (`sed -n '115,120p' a.py`), not the output's own rows."""
MARKER_TOKENS = 14
"""A gap this cheap stays: a line or two is worth more shown than pointed at."""
NUMBERED = re.compile(r"\s{0,8}(\d{1,7})(?:\t|:| \|)")
"""A line of a numbered view: its number first (`  115\t...`, `115:...`, an editor's `115 |`)."""
MIN_DEDUPE_CHARS = 8
"""Shorter lines (blank, `}`, `else:`) are never elided as repeats: they carry nothing."""


@dataclass(frozen=True)
class OutputLines:
    """An agent step's output split into lines (across its observation messages), indexed once."""

    lines: tuple[str, ...]
    tokens: tuple[int, ...]
    """Estimated tokens per line (for ranking and caps; an excerpt's own count is exact)."""
    words: dict[str, tuple[int, ...]]
    """Word -> the lines it occurs on (tuples: the garbage collector stops scanning them)."""
    call_tokens: int
    """Tokens of the step's other messages (the call), which an excerpt keeps whole."""
    spans: dict[int, tuple[int, int]]
    """Message position -> its lines as [first, end)."""
    parts: dict[int, tuple[int, ...]] = field(default_factory=dict)
    """Message position of a JSON-wrapped output -> where each of its strings' lines end (its lines are
    the strings' own, not the wrapper's)."""
    handle: str = ""
    """The node's `HANDLE` with recall on: an excerpt's first marker names the step to read again in full."""

    @classmethod
    def of(cls, node: Node) -> OutputLines:
        """Lines, a word index and per-line token estimates from the node's once-counted totals
        (the output's tokens spread over its lines by length): nothing is encoded again here."""
        lines: list[str] = []
        spans: dict[int, tuple[int, int]] = {}
        parts: dict[int, tuple[int, ...]] = {}
        call_tokens = node.compressed_tokens
        for position, message in enumerate(node.step.chat_messages()):
            if is_observation(node.step, message):
                call_tokens -= count_message(
                    {**message, "content": placeholder(message.get("content"), node.handle)}
                )
                text = content_text(message.get("content"))
                pieces = output_lines(text)
                if json_output(text) is not None:
                    parts[position] = tuple(accumulate(map(len, pieces), initial=len(lines)))[1:]
                spans[position] = (len(lines), len(lines) + sum(map(len, pieces)))
                lines += [line for piece in pieces for line in piece]
        words: dict[str, list[int]] = {}
        said: dict[str, set[str]] = {}  # a line printed again (a log's) is searched once
        for number, line in enumerate(lines):
            found = said.get(line)
            if found is None:
                found = said[line] = set(WORD.findall(line))
            for word in found:
                words.setdefault(word, []).append(number)
        index = {word: tuple(numbers) for word, numbers in words.items()}
        per_char = max(0, node.full_tokens - call_tokens) / max(1, sum(len(line) + 1 for line in lines))
        tokens = tuple(int((len(line) + 1) * per_char) + 1 for line in lines)
        return cls(tuple(lines), tokens, index, call_tokens, spans, parts, node.handle)

    def keys(self) -> tuple[str | None, ...]:
        """Each line as a repeat-detection key, or None when it is too short to count (computed once
        per node by the caller)."""
        stripped = [line.strip() for line in self.lines]
        return tuple(line if len(line) >= MIN_DEDUPE_CHARS else None for line in stripped)


def echoes(keys: tuple[str | None, ...]) -> dict[int, int]:
    """Each line that repeats an earlier line of the same output (a warning printed per test, a traceback
    printed twice) -> the first line it repeats; computed once per node."""
    first: dict[str, int] = {}
    out: dict[int, int] = {}
    for number, key in enumerate(keys):
        if key is not None:
            out_of = first.setdefault(key, number)
            if out_of != number:
                out[number] = out_of
    return out


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
    """The node's messages with observation lines outside `keep` replaced by markers (1-based numbers).

    Tokens are counted exactly on the excerpt text; the same excerpt of the same node is counted once.
    """
    total = len(lines.lines)
    tokens = lines.call_tokens
    messages: list[Message] = []
    kept = sorted(keep)
    extraction = cached_extraction(node.step)  # when already computed: counts of the whole texts
    handle = lines.handle  # on the excerpt's first marker only: one mark names the step
    for position, message in enumerate(node.step.chat_messages()):
        span = lines.spans.get(position)
        if span is None:
            messages.append(dict(message))
            continue
        first, end = span
        if position in lines.parts:
            text, cut = _wrapped_excerpt(lines, kept, position, content_text(message.get("content")), handle)
        else:
            parts, cut = _kept_lines(lines, kept, first, end, handle)
            text = "\n".join(parts) if parts else None
        handle = "" if cut and text is not None else handle
        if text is not None and not cut and extraction is not None:  # the output's own text, counted once
            tokens += MESSAGE_OVERHEAD + extraction.content_tokens[position]
        else:
            text = placeholder(message.get("content"), node.handle) if text is None else text
            tokens += MESSAGE_OVERHEAD + _count(text)
        messages.append({**message, "content": text})
    return Excerpt(messages, tokens, len(keep), total, why)


def _kept_lines(
    lines: OutputLines, kept: list[int], first: int, end: int, handle: str = ""
) -> tuple[list[str], bool]:
    """Lines `first`..`end` (0-based, end excluded) cut to the kept ones, and whether any was cut; the first
    marker carries `handle`: each more would repeat the same step's number."""
    parts: list[str] = []
    cursor, cut = first, False
    for n in [*kept[bisect_left(kept, first) : bisect_left(kept, end)], end]:
        if cursor < n and (n < end or parts):
            if sum(lines.tokens[cursor:n]) <= MARKER_TOKENS:  # a gap cheaper than its marker stays
                parts += lines.lines[cursor:n]
            else:
                parts.append(marker(lines.lines, cursor, n - 1, "" if cut else handle))
                cut = True
        if n < end:
            parts.append(lines.lines[n])
        cursor = n + 1
    return parts, cut


def _wrapped_excerpt(
    lines: OutputLines, kept: list[int], position: int, text: str, handle: str = ""
) -> tuple[str | None, bool]:
    """A JSON-wrapped output's excerpt and whether it cut anything: each string cut to its kept lines (one
    left with none is a single marker), put back in the wrapper, so the agent reads valid JSON. None
    when no line is kept (the placeholder stands for it); the output verbatim when none is cut."""
    first = lines.spans[position][0]
    values: list[str] = []
    kept_any, cut = False, False
    for end in lines.parts[position]:
        named = "" if cut else handle
        parts, cut_here = _kept_lines(lines, kept, first, end, named)
        kept_any = kept_any or bool(parts)
        if not parts and end > first:
            parts, cut_here = [marker(lines.lines, first, end - 1, named)], True
        values.append("\n".join(parts))
        cut, first = cut or cut_here, end
    wrapped = json_output(text)
    if not kept_any or wrapped is None:
        return None, False
    return (wrapped.rebuild(values), True) if cut else (text, False)


def marker(lines: tuple[str, ...], first: int, last: int, handle: str = "") -> str:
    """The marker for cut lines `first`..`last` (0-based): their own numbers in a numbered view,
    else their 1-based rows in the output; `handle` names the step (recall on)."""
    start, end = NUMBERED.match(lines[first]), NUMBERED.match(lines[last])
    if start and end and int(start.group(1)) <= int(end.group(1)):
        return MARKER.format(start=start.group(1), end=end.group(1), handle=handle)
    return MARKER.format(start=first + 1, end=last + 1, handle=handle)


@lru_cache(maxsize=512)
def _count(text: str) -> int:
    """Excerpts of an older output recur from step to step: each distinct text is encoded once."""
    return count_text(text)
