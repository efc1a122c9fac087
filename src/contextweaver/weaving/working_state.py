"""The working-state note of a cut: what the context leaves out, and what the agent must not forget.

A cut drops or compresses older steps. Compactors that summarize lose most of all the trail of files
touched and which tests fail; the graph and the tracker know both exactly, so a cut writes them in
one short message, deterministic and without an LLM call: which steps were left out, the files the
agent changed (with the step of the last change), the failing tests and the command that last ran
them, the tests fixed so far, and, while room is left, a one-line trace of the left-out steps'
actions, newest first. It goes last, after the steps the weave kept: every weave rewrites it (the step
it speaks of changes), and a message that changes ends the prefix a provider's cache serves, so right
after the root it made every cut rewrite every step. A lazy cut freezes it with the cut's context, and
the steps appended until the next cut follow it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from typing import Protocol

from contextweaver.records import Message, Node
from contextweaver.tokens import MESSAGE_OVERHEAD, PIECE_CHARS, count_message, count_text
from contextweaver.validation.tracker import TestTracker, shown_id
from contextweaver.weaving.changed import ChangedFiles, comma
from contextweaver.weaving.run_index import RunIndex, changes, run_index
from contextweaver.weaving.written import WrittenFiles

SHARE = 1 / 3
"""Most of the room left after the newest step the note may take (it takes only what its lines need),
beyond what its short form needs: the marker, every file changed and every failing test always fit
when the newest step leaves room for them."""
CAP = 320
"""Most tokens the full note takes at any budget (4% of an 8k budget); the short form may take more."""
MIN_TOKENS = 16
"""A room that cannot spare this much gets no note (the shortest marker takes about 15)."""
OMITTED_LINE = 30
"""Tokens held for the line naming the omitted steps (known only once the steps are chosen)."""
HEAD = "[ContextWeaver working state at step {step}: older steps were cut from this context]"
SHORT_HEAD = "[ContextWeaver working state at step {step}: steps omitted: {omitted}]"
LEAST_HEAD = "[ContextWeaver: steps omitted: {omitted}]"
RECALL = "- reread step #N: {hint}"
"""Given once, in every form of the marker (N: a step the note omits, or a placeholder, trim or excerpt
marks `#N`): the marks then carry only the step number."""
FILES = 15
"""Files the full form gives with the step of their last change (the short form names every file)."""
FILES_LABEL = "- files changed so far: "
SHORT_FILES_LABEL = "- files changed: "
TESTS = 10
"""Failing tests per step in the full form (the short form names every one)."""
TRACE_CHARS = 90

Lines = list[str]


@dataclass
class WorkingState:
    """What a weave needs to write the note: every step so far and the test tracker."""

    nodes: Sequence[Node]
    tracker: TestTracker
    written: WrittenFiles = field(default_factory=WrittenFiles)
    """The texts the agent wrote, as they now stand: the note gives those of the files in use."""
    recall: str = ""
    """How the agent reads a step again (`WeaverConfig.recall_hint`), "" with recall off."""
    changed: ChangedFiles | None = None
    """The files changed, recorded as the steps were added (None: recorded here from `nodes`)."""

    @cached_property
    def recall_line(self) -> list[str]:
        return [RECALL.format(hint=self.recall)] if self.recall else []

    @cached_property
    def state_parts(self) -> list[Forms]:
        """The parts that do not depend on what is cut, each in its forms, fullest first: the files
        changed (the short form names every one without its step) and the failing tests (the short
        form names every one without the command that ran it). The tests are as many as the suite's,
        not the steps: their forms are written out; the files' only once chosen."""
        changed = self.changed if self.changed is not None else ChangedFiles.of(self.nodes)
        by_step: dict[int, list[str]] = {}
        for test, step in self.tracker.failing():
            by_step.setdefault(step, []).append(shown_id(test))
        ordered = sorted(by_step.items(), reverse=True)
        tests: list[Lines] = []
        if ordered:
            full = [f"- failing at step {step} ({_command(self.nodes[step])}): {', '.join(names)}"
                    for step, names in ordered]  # fmt: skip
            names = [name for _, step_names in ordered for name in step_names]
            tests = [full, *_shortened("- failing: ", names, "other")]
        files: list[Forms] = [FileForms(changed)] if len(changed) else []
        return [*files, *([Written(tests)] if tests else [])]

    @cached_property
    def every_named(self) -> int:
        """Tokens of the state parts' second forms: every file changed and every failing test, without steps."""
        return sum(p.costs[min(1, len(p.costs) - 1)] for p in self.state_parts)

    @cached_property
    def fixed_line(self) -> list[str]:
        fixed = self.tracker.fixed()
        if not fixed:
            return []
        more = f", +{len(fixed) - TESTS} more" if len(fixed) > TESTS else ""
        return [f"- fixed so far: {', '.join(shown_id(t) for t in fixed[:TESTS])}{more}"]

    def reserve(self, room: float) -> int:
        """Tokens to set aside out of `room` for the note (0: no note at this budget): its full form up
        to a share of the room and the cap, and always at least its short form when the room holds it;
        the trace of omitted steps gets only what the steps leave."""
        parts = self.state_parts
        full = (
            MESSAGE_OVERHEAD
            + OMITTED_LINE
            + _tokens(HEAD, *self.fixed_line, *self.recall_line)
            + sum(p.costs[0] for p in parts)
        )
        short = MESSAGE_OVERHEAD + OMITTED_LINE + _tokens(SHORT_HEAD, *self.recall_line) + self.every_named
        held = int(min(max(min(full, CAP, SHARE * room), short), room))
        return held if held >= MIN_TOKENS else 0

    def least(self, room: float) -> int:
        """Tokens to set aside out of `room` when the newest step is trimmed to fit: the note's least form
        (the shortest marker, the recall line, every file changed and every failing test, none with its
        step), whatever the room. The newest output is what the next step reads most (on the train splits
        the fuller forms cost the Java runs at 8k 0.021 of next-step evidence: docs/TUNING.md)."""
        marker = _tokens(
            LEAST_HEAD.format(omitted=f"{len(self.nodes)} of {len(self.nodes)}"), *self.recall_line
        )
        held = int(min(MESSAGE_OVERHEAD + marker + self.every_named, room))
        return held if held >= MIN_TOKENS else 0

    def note(
        self, left_out: Omitted | Sequence[int], tokens: int, texts: Sequence[str] = ()
    ) -> tuple[Message, int] | None:
        """The note for a context that dropped the steps `left_out`, within `tokens`, and its size. The
        marker, the files and the failing tests come first, in their short forms when room is short;
        then `texts` (of what the agent wrote, held for apart: `weaving/written.py`); then the fixed
        tests and the trace of the omitted steps while room is left: the edits first (what a later edit
        replaces is often what one of them wrote), newest first."""
        step = len(self.nodes) - 1
        if not isinstance(left_out, Omitted):
            left_out = Omitted.listed(self.nodes, left_out)
        if left_out:
            ranges = f"{left_out.ranges()} ({len(left_out)} of {step})"
            brief = f"{len(left_out)} of {step}, between {left_out.first()} and {left_out.last()}"
            marker = [[HEAD.format(step=step), f"- steps omitted: {ranges}"],
                      [SHORT_HEAD.format(step=step, omitted=ranges)],
                      [SHORT_HEAD.format(step=step, omitted=brief)],
                      [LEAST_HEAD.format(omitted=f"{len(left_out)} of {step}")]]  # fmt: skip
        else:
            marker = [[HEAD.format(step=step)]]
        marker = [form + self.recall_line for form in marker]
        room = tokens
        held = _tokens(*texts)  # the texts were held for apart from the note's own room
        parts = [Written(marker), *self.state_parts]
        for _ in range(3):  # the lines' counts are estimates of the joined text's: count it exactly
            kept = _fit([p.costs for p in parts], room - held)
            if kept is None:
                return None
            chosen = list(zip(parts, kept, strict=False))
            lines = [line for part, form in chosen for line in part.lines(form)]
            lines += texts
            used = MESSAGE_OVERHEAD + sum(part.tokens(form) for part, form in chosen) + held
            for line in chain(self.fixed_line, _trace_lines(left_out)):  # while room is left
                if used + _tokens(line) > room:
                    break
                lines.append(line)
                used += _tokens(line)
            message: Message = {"role": "user", "content": "\n".join(lines)}
            exact = count_message(message)
            if exact <= tokens:
                return message, exact
            room -= exact - tokens
        return None


def _tokens(*lines: str) -> int:
    """Estimated tokens of lines joined by line breaks (each line's count plus its break)."""
    return sum(count_text(line) + 1 for line in lines)


def _fit(costs: list[list[int]], tokens: int) -> list[int] | None:
    """The form to take of each part (by the tokens of its forms) within `tokens`: every part in its
    shortest form first (the later parts left out when even that does not fit, the marker never), then
    each part after the marker, in order, and the marker last, in the fullest form the room left allows:
    first up to the second form (every file, every test), then the full one. None when the marker alone
    does not fit."""
    chosen = [len(forms) - 1 for forms in costs]
    while costs and MESSAGE_OVERHEAD + sum(c[i] for c, i in zip(costs, chosen, strict=False)) > tokens:
        if len(costs) == 1:
            return None
        costs, chosen = costs[:-1], chosen[:-1]
    used = MESSAGE_OVERHEAD + sum(c[i] for c, i in zip(costs, chosen, strict=True))
    for fullest in (1, 0):  # every item named (each part's second form) before any part's full form
        for part in [*range(1, len(costs)), 0]:  # the marker's detail last
            cost = costs[part]
            for form in range(min(fullest, chosen[part]), chosen[part]):
                extra = cost[form] - cost[chosen[part]]
                if used + extra <= tokens:
                    used += extra
                    chosen[part] = form
                    break
    return chosen


class Forms(Protocol):
    """A part of the note in its forms, fullest first: what each costs, and the lines of one."""

    @property
    def costs(self) -> list[int]: ...

    def lines(self, form: int) -> Lines: ...

    def tokens(self, form: int) -> int:
        """`_tokens` of the form's lines."""
        ...


@dataclass(frozen=True)
class Written:
    """A part whose forms are written out (the marker, the failing tests: as many as the suite's tests)."""

    forms: list[Lines]

    @cached_property
    def costs(self) -> list[int]:
        return [_tokens(*form) for form in self.forms]

    def lines(self, form: int) -> Lines:
        return self.forms[form]

    def tokens(self, form: int) -> int:
        return self.costs[form]


@dataclass(frozen=True)
class FileForms:
    """The files changed: the full form dates the FILES most recent ones, the second names every file,
    the next ones the most recent half, quarter... (`_shortened`). Their costs add up the tokens each
    entry was counted to when its change was recorded (`changed.item_tokens`: the line's own count but
    for a line too long to encode whole); only the chosen form is written."""

    changed: ChangedFiles
    _written: dict[int, Lines] = field(default_factory=dict, compare=False)

    @cached_property
    def costs(self) -> list[int]:
        changed, n = self.changed, len(self.changed)
        dated, oldest = min(FILES, n), changed.oldest()
        full = count_text(FILES_LABEL.rstrip()) + changed.dated_tokens(dated)
        full += changed.bare_tokens(n) - changed.bare_tokens(dated)
        full -= comma(oldest.dated if n <= FILES else oldest.bare)
        label = count_text(SHORT_FILES_LABEL.rstrip())
        costs = [full + 1, label + changed.bare_tokens(n) - comma(oldest.bare) + 1]
        for shown in _halves(n):
            costs.append(label + changed.bare_tokens(shown) + count_text(f" +{n - shown} older") + 1)
        return costs

    def lines(self, form: int) -> Lines:
        if form not in self._written:
            self._written[form] = self._write(form)
        return self._written[form]

    def _write(self, form: int) -> Lines:
        changed, n = self.changed, len(self.changed)
        if form == 0:
            items = [c.dated if i < FILES else c.bare for i, c in enumerate(changed.newest())]
            return [FILES_LABEL + ", ".join(items)]
        shown = n if form == 1 else n >> (form - 1)
        more = f", +{n - shown} older" if shown < n else ""
        return [SHORT_FILES_LABEL + ", ".join(c.bare for c in changed.newest(shown)) + more]

    def tokens(self, form: int) -> int:
        """Its cost, but for a line long enough to be encoded in pieces (then its cost is an estimate)."""
        line = self.lines(form)[0]
        return self.costs[form] if len(line) <= PIECE_CHARS else _tokens(line)


def _halves(n: int) -> Iterator[int]:
    shown = n // 2
    while shown:
        yield shown
        shown //= 2


def _shortened(label: str, items: list[str], rest: str) -> list[Lines]:
    """A line naming every item, then lines naming the first half, quarter... and how many they leave."""
    forms = [[label + ", ".join(items)]]
    shown = len(items) // 2
    while shown:
        forms.append([f"{label}{', '.join(items[:shown])}, +{len(items) - shown} {rest}"])
        shown //= 2
    return forms


def _trace_lines(left_out: Omitted) -> Iterator[str]:
    """The trace of the left-out steps, edits first, each newest first: made line by line, as the note
    takes them (it stops at the first that does not fit, long before the oldest step of a long run)."""
    yield from (_trace(n) for n in left_out.newest(changed=True))
    yield from (_trace(n) for n in left_out.newest() if not changes(n))


def _trace(node: Node) -> str:
    return f"- step {node.index} {'changed' if changes(node) else 'did'}: {_command(node)}"


def _command(node: Node) -> str:
    action = next((line.strip() for line in node.step.action.splitlines() if line.strip()), "")
    text = action or node.step.thought.strip().split("\n", 1)[0] or "(no action)"
    return f"`{text[:TRACE_CHARS]}`" + ("…" if len(text) > TRACE_CHARS else "")


class Omitted:
    """The steps of the run a context leaves out, read as far as the note needs: how many, the first and
    the last, their ranges, the newest ones. A long run's context omits most of it; the note reads the
    chosen steps and a few of the others."""

    def __init__(self, run: RunIndex, chosen: Collection[int]) -> None:
        """`chosen`: the indices of the steps the context keeps in some form."""
        self.run = run
        self.kept = sorted(run.position[index] for index in chosen)
        self.kept_set = set(self.kept)

    @classmethod
    def listed(cls, nodes: Sequence[Node], indices: Sequence[int]) -> Omitted:
        """The steps `indices` of the run `nodes` (the root first)."""
        left_out = set(indices)
        return cls(run_index(nodes[0], nodes[1:]), [n.index for n in nodes[1:] if n.index not in left_out])

    def __len__(self) -> int:
        return len(self.run.steps) - len(self.kept)

    def first(self) -> int:
        return next(self._spans())[0]

    def last(self) -> int:
        stop = len(self.run.steps)  # the newest steps are most often kept: walk down past them
        for position in reversed(self.kept):
            if position != stop - 1:
                break
            stop = position
        return self.run.steps[stop - 1].index

    def ranges(self) -> str:
        """`3-19, 22` for [3..19, 22]."""
        return ", ".join(f"{a}-{b}" if b > a else str(a) for a, b in self._spans())

    def _spans(self) -> Iterator[tuple[int, int]]:
        """Runs of consecutive omitted step numbers, oldest first: the gaps between kept steps, split where
        the steps are not numbered consecutively."""
        steps = self.run.steps
        for start, stop in zip([0, *(p + 1 for p in self.kept)], [*self.kept, len(steps)], strict=True):
            while start < stop:  # one span when numbered consecutively, as the graph numbers them
                end = start
                if steps[stop - 1].index - steps[start].index != stop - 1 - start:
                    while end + 1 < stop and steps[end + 1].index == steps[end].index + 1:
                        end += 1
                else:
                    end = stop - 1
                yield steps[start].index, steps[end].index
                start = end + 1

    def newest(self, changed: bool = False) -> Iterator[Node]:
        """The omitted steps newest first; with `changed`, only those that changed a file."""
        positions = reversed(self.run.changed) if changed else range(len(self.run.steps) - 1, -1, -1)
        return (self.run.steps[p] for p in positions if p not in self.kept_set)
