"""The working-state note of a cut: what the context leaves out, and what the agent must not forget.

A cut drops or compresses older steps. Compactors that summarize lose most of all the trail of files
touched and which tests fail; the graph and the tracker know both exactly, so a cut writes them in
one short message, deterministic and without an LLM call: which steps were left out, the files the
agent changed (with the step of the last change), the failing tests and the command that last ran
them, the tests fixed so far, and, while room is left, a one-line trace of the left-out steps'
actions, newest first. A lazy cut puts it right after the root and freezes it with the cut; per-step
weaving rewrites it every step, so there it goes last, where it breaks no cached prefix.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain

from contextweaver.tokens import MESSAGE_OVERHEAD, count_message, count_text
from contextweaver.types import Message, Node
from contextweaver.validation.tracker import TestTracker, shown_id

SHARE = 1 / 3
"""Most of the room left after the newest step the note may take (it takes only what its lines need)."""
CAP = 320
"""Most tokens the note takes at any budget (4% of an 8k budget)."""
MIN_TOKENS = 40
"""A room that cannot spare this much gets no note."""
OMITTED_LINE = 30
"""Tokens held for the line naming the omitted steps (known only once the steps are chosen)."""
HEAD = "[ContextWeaver working state at step {step}: older steps were cut from this context]"
FILES = 15
TRACE_CHARS = 90


@dataclass
class WorkingState:
    """What a weave needs to write the note: every step so far and the test tracker."""

    nodes: Sequence[Node]
    tracker: TestTracker
    last: bool = False
    """Where the note goes: right after the root (frozen with a lazy cut), or last (rewritten each step)."""

    @cached_property
    def state_lines(self) -> list[str]:
        """The lines that do not depend on what is cut: the files changed, failing and fixed tests."""
        return [HEAD.format(step=len(self.nodes) - 1), *self._state_lines()]

    def reserve(self, room: float) -> int:
        """Tokens to set aside out of `room` for the note's state lines (0: no note at this budget); the
        trace of omitted steps gets only what the steps leave."""
        needed = MESSAGE_OVERHEAD + OMITTED_LINE + sum(count_text(line) + 1 for line in self.state_lines)
        held = int(min(needed, CAP, SHARE * room))
        return held if held >= MIN_TOKENS else 0

    def note(self, left_out: Sequence[int], tokens: int) -> tuple[Message, int] | None:
        """The note for a context that dropped the steps `left_out`, within `tokens`, and its size."""
        omitted = (
            [f"- steps omitted: {_ranges(left_out)} ({len(left_out)} of {len(self.nodes) - 1})"]
            if left_out
            else []
        )
        trace = (f"- step {i} did: {_command(self.nodes[i])}" for i in sorted(left_out, reverse=True))
        lines = chain(
            [self.state_lines[0], *omitted, *self.state_lines[1:]], trace
        )  # the trace while room is left
        kept, used = [], MESSAGE_OVERHEAD
        for line in lines:
            cost = count_text(line) + 1
            if used + cost > tokens:
                break
            kept.append(line)
            used += cost
        while len(kept) >= 2:  # the lines' counts are estimates of the joined text's: count it exactly
            message: Message = {"role": "user", "content": "\n".join(kept)}
            exact = count_message(message)
            if exact <= tokens:
                return message, exact
            kept.pop()
        return None

    def _state_lines(self) -> list[str]:
        lines = []
        changed = self._changed_files()
        if changed:
            shown = ", ".join(f"{path} (step {step})" for path, step in changed[:FILES])
            more = f", +{len(changed) - FILES} more" if len(changed) > FILES else ""
            lines.append(f"- files changed so far: {shown}{more}")
        failing = self.tracker.failing()
        if failing:
            by_step: dict[int, list[str]] = {}
            for test, step in failing:
                by_step.setdefault(step, []).append(shown_id(test))
            for step, tests in sorted(by_step.items(), reverse=True):
                lines.append(f"- failing at step {step} ({_command(self.nodes[step])}): {', '.join(tests[:10])}"
                             + (f", +{len(tests) - 10} more" if len(tests) > 10 else ""))  # fmt: skip
        fixed = self.tracker.fixed()
        if fixed:
            lines.append(f"- fixed so far: {', '.join(shown_id(t) for t in fixed[:10])}"
                         + (f", +{len(fixed) - 10} more" if len(fixed) > 10 else ""))  # fmt: skip
        return lines

    def _changed_files(self) -> list[tuple[str, int]]:
        """Edited or created paths as the agent wrote them, the most recently changed first."""
        last: dict[str, int] = {}
        for node in self.nodes[1:]:
            for path in node.facts.edited_files:
                last[path] = node.index
        return sorted(last.items(), key=lambda item: (-item[1], item[0]))


def _command(node: Node) -> str:
    action = next((line.strip() for line in node.step.action.splitlines() if line.strip()), "")
    text = action or node.step.thought.strip().split("\n", 1)[0] or "(no action)"
    return f"`{text[:TRACE_CHARS]}`" + ("…" if len(text) > TRACE_CHARS else "")


def _ranges(indices: Sequence[int]) -> str:
    """`3-19, 22` for [3..19, 22]."""
    ordered = sorted(indices)
    parts, start, previous = [], ordered[0], ordered[0]
    for index in [*ordered[1:], None]:
        if index is not None and index == previous + 1:
            previous = index
            continue
        parts.append(f"{start}-{previous}" if previous > start else str(start))
        if index is not None:
            start = previous = index
    return ", ".join(parts)
