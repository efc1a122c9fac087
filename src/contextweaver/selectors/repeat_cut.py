"""Lines a context already holds elsewhere, cut from the kept outputs (the selection's third step).

A kept output's line is cut when the context holds it anyway: in a later kept output, in the thought
or action of a kept step (a script written with a heredoc, code the agent quoted), in the task, or
earlier in the same output. The current step's output is never cut, and a run of repeated lines stays
when it costs no more than the marker that would replace it. Every key is computed once per node; a
plan reads only the kept steps.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from contextweaver.weaving.excerpts import (
    MARKER_TOKENS,
    MIN_DEDUPE_CHARS,
    NUMBERED,
    OutputLines,
    echoes,
    runs_of,
)

TASK = 0
"""The root's index: where a line repeated from the system prompt or the task is read."""
SHELL_QUOTE = "'\"'\"'"
"""A quote inside a single-quoted shell argument (`'it'"'"'s'`): an editor prints the text unquoted."""
ARGUMENT = re.compile(r"^.*--[\w-]+\s+'")
"""What opens a quoted argument on a call's line (`str_replace_editor str_replace a.py --new_str '`)."""


def line_keys(text: str) -> frozenset[str]:
    """The lines of a text long enough to count as repeats, stripped."""
    return frozenset(key for line in text.split("\n") if len(key := line.strip()) >= MIN_DEDUPE_CHARS)


def spoken_keys(text: str) -> frozenset[str]:
    """The lines of a call's quoted arguments as an editor prints them: shell quoting undone, the
    `--new_str '` that opens an argument and the quote that closes it left out."""
    text = text.replace(SHELL_QUOTE, "'")
    keys = set()
    for line in text.split("\n"):
        line = ARGUMENT.sub("", line).strip().removesuffix("'").strip()
        if len(line) >= MIN_DEDUPE_CHARS:
            keys.add(line)
    return frozenset(keys)


def unnumbered(line: str) -> str:
    """A line without the number a numbered view gives it (`  120\tx = 1` -> `x = 1`), stripped."""
    found = NUMBERED.match(line)
    return (line[found.end() :] if found else line).strip()


@dataclass(frozen=True)
class Cut:
    """What stays of one kept output, and where its cut lines can still be read."""

    kept: set[int]
    seen_in: set[int]
    """Steps (TASK for the root) whose output, thought or action holds cut lines."""
    inside: bool
    """Some cut lines repeat earlier lines of the same output."""

    @property
    def note(self) -> str:
        where = []
        if TASK in self.seen_in:
            where.append("repeated in the task")
        if steps := sorted(self.seen_in - {TASK}):
            where.append(f"repeated in step {', '.join(map(str, steps[:3]))} (output, thought or action)")
        if self.inside:
            where.append("repeated earlier in this output")
        return " or ".join(where)


class RepeatIndex:
    """Per node, once: each output line's key, the lines an output repeats of itself, and the lines each
    step (and the root) said."""

    def __init__(self) -> None:
        self._keys: dict[int, tuple[str | None, ...]] = {}
        self._key_set: dict[int, frozenset[str | None]] = {}
        self._echoes: dict[int, dict[int, int]] = {}
        """Per output, each line that repeats an earlier line of the same output -> that earlier line."""
        self._said: dict[int, frozenset[str]] = {}
        self._own: dict[int, frozenset[int]] = {}
        """Per output, the lines that repeat its own step's thought or action (an editor's echo of the edit)."""
        self._spoken: tuple[int, frozenset[str]] = (TASK, frozenset())
        """The last step's said lines, also with its shell quoting undone (read when its output is added)."""

    def add_said(self, index: int, text: str) -> None:
        """A step's thought and action, or (TASK) the root's messages."""
        self._said[index] = keys = line_keys(text)
        self._spoken = (index, keys | spoken_keys(text))

    def add_output(self, index: int, lines: OutputLines) -> None:
        keys = self._keys[index] = lines.keys()
        self._key_set[index] = frozenset(keys)
        self._echoes[index] = echoes(keys)
        spoken, said = self._spoken
        if spoken == index and said:
            self._own[index] = frozenset(
                n
                for n, line in enumerate(lines.lines)
                if len(key := unnumbered(line)) >= MIN_DEDUPE_CHARS and key in said
            )

    def own(self, index: int) -> frozenset[int]:
        """The output's lines its own step's thought or action holds: the context holds them with that step
        (an edit's output echoing the new text, a script's output echoing the command)."""
        return self._own.get(index, frozenset())

    def cuts(
        self, keep: Mapping[int, set[int] | None], current: int, outputs: Mapping[int, OutputLines]
    ) -> Iterator[tuple[int, Cut]]:
        """Newest first, each kept output's cut (`keep`: output -> its chosen lines, None for all)."""
        later = dict.fromkeys(self._said.get(TASK, ()), TASK)
        for index in sorted(keep, reverse=True):
            later.update({key: index for key in self._said.get(index, ()) if key not in later})
            if index in outputs:
                yield index, self._cut(index, outputs[index], keep[index], later, index == current)

    def _cut(
        self, index: int, lines: OutputLines, wanted: set[int] | None, later: dict[str, int], current: bool
    ) -> Cut:
        keys = self._keys[index]
        if wanted is None:
            numbers: Sequence[int] = range(len(lines.lines))
            present = self._key_set[index]
        else:
            numbers = sorted(wanted)
            present = frozenset([keys[n] for n in numbers])
        if current or later.keys().isdisjoint(present):  # the usual case: nothing recurs
            repeats: set[int] = set()
        else:
            repeats = {n for n in numbers if keys[n] in later}
        echo = {} if current else self._echoes[index]
        inside = {n for n, first in echo.items() if wanted is None or (n in wanted and first in wanted)}
        repeats |= inside
        kept = set(numbers) - repeats
        for first, last in runs_of(repeats):  # a run cheaper than its marker stays
            if sum(lines.tokens[first : last + 1]) <= MARKER_TOKENS:
                kept.update(range(first, last + 1))
        seen_in = {later[key] for n in repeats - kept - inside if (key := keys[n]) is not None}
        later.update({key: index for key in present if key is not None and key not in later})
        return Cut(kept, seen_in, bool(inside - kept))
