"""Lines a context already holds elsewhere, cut from the kept outputs (the selection's third step).

A kept output's line is cut when the context holds it anyway: in a later kept output, in the thought
or action of a kept step (a script written with a heredoc, code the agent quoted), in the task, or
earlier in the same output. The current step's output is never cut, and a run of repeated lines stays
when it costs no more than the marker that would replace it. A step's said lines are kept per step; an
output's keys are built with its lines (`OutputKeys`, which the output index may drop and build again); a
plan reads only the kept steps.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
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


@dataclass(frozen=True)
class OutputKeys:
    """One output's repeat keys, built from its lines and its own step's thought and action alone (so an
    index can drop them and build them again: `output_index.py`)."""

    keys: tuple[str | None, ...]
    """Each line's key (`OutputLines.keys`)."""
    key_set: frozenset[str | None]
    echoes: dict[int, int]
    """Each line that repeats an earlier line of the same output -> that earlier line."""
    own: frozenset[int]
    """The lines that repeat its own step's thought or action (an editor's echo of the edit)."""

    @classmethod
    def of(cls, lines: OutputLines, said: str) -> OutputKeys:
        """`said`: the step's thought and action, also read with its shell quoting undone."""
        keys = lines.keys()
        spoken = line_keys(said) | spoken_keys(said)
        own = (
            frozenset(
                n
                for n, line in enumerate(lines.lines)
                if len(key := unnumbered(line)) >= MIN_DEDUPE_CHARS and key in spoken
            )
            if spoken
            else frozenset()
        )
        return cls(keys, frozenset(keys), echoes(keys), own)


class RepeatIndex:
    """The lines each step (and the root) said, kept per step; an output's own keys (`OutputKeys`) are
    read from the caller when a plan keeps it."""

    def __init__(self) -> None:
        self._said: dict[int, frozenset[str]] = {}

    def add_said(self, index: int, text: str) -> None:
        """A step's thought and action, or (TASK) the root's messages."""
        self._said[index] = line_keys(text)

    def cuts(
        self,
        keep: Mapping[int, set[int] | None],
        current: int,
        output: Callable[[int], tuple[OutputLines, OutputKeys] | None],
    ) -> Iterator[tuple[int, Cut]]:
        """Newest first, each kept output's cut (`keep`: output -> its chosen lines, None for all;
        `output`: a step's output lines and keys, None for a step without output)."""
        later = dict.fromkeys(self._said.get(TASK, ()), TASK)
        for index in sorted(keep, reverse=True):
            later.update({key: index for key in self._said.get(index, ()) if key not in later})
            found = output(index)
            if found is not None:
                yield index, self._cut(index, *found, keep[index], later, index == current)

    def _cut(
        self,
        index: int,
        lines: OutputLines,
        keyed: OutputKeys,
        wanted: set[int] | None,
        later: dict[str, int],
        current: bool,
    ) -> Cut:
        keys = keyed.keys
        if wanted is None:
            numbers: Sequence[int] = range(len(lines.lines))
            present = keyed.key_set
        else:
            numbers = sorted(wanted)
            present = frozenset([keys[n] for n in numbers])
        if current or later.keys().isdisjoint(present):  # the usual case: nothing recurs
            repeats: set[int] = set()
        else:
            repeats = {n for n in numbers if keys[n] in later}
        echo = {} if current else keyed.echoes
        inside = {n for n, first in echo.items() if wanted is None or (n in wanted and first in wanted)}
        repeats |= inside
        kept = set(numbers) - repeats
        for first, last in runs_of(repeats):  # a run cheaper than its marker stays
            if sum(lines.tokens[first : last + 1]) <= MARKER_TOKENS:
                kept.update(range(first, last + 1))
        seen_in = {later[key] for n in repeats - kept - inside if (key := keys[n]) is not None}
        later.update({key: index for key in present if key is not None and key not in later})
        return Cut(kept, seen_in, bool(inside - kept))
