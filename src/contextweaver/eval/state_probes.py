"""State across a cut (docs/evaluation.md, metric 7): does a context that cut the history still say what the
agent changed and what fails?

The truth comes from the trajectory alone, not from what the strategy kept: the files each action
edits, creates, copies, moves or deletes (eval/edits.py, independent of the memory's own facts) and the
tests failing after each step, from a fresh test tracker fed every output in order (the runners' own
lines). A probe is asked only where the context is smaller than the full history (something was cut).
"""

from __future__ import annotations

from dataclasses import dataclass

from contextweaver import boundary
from contextweaver.eval.edits import find_copies, find_deletions, trajectory_edits
from contextweaver.eval.evidence import EarlierText
from contextweaver.formats.base import Trajectory
from contextweaver.records import WovenContext
from contextweaver.validation.tracker import TestTracker

OMITTED = "steps omitted"
"""How a woven context says steps were left out (working_state.py); a baseline never says it."""


def edit_old_texts(trajectory: Trajectory) -> dict[int, frozenset[str]]:
    """Edit freshness: per step index, the texts its edits replace (old_str, a sed pattern or line
    number), which the context for that step should hold (else the agent edits a file it has not read).
    Only texts the history before the step holds: a line number the agent counted itself or a regex
    (`print.*`) is in no context, the full history's neither."""
    wanted = {
        index: {text for edit in edits for text in edit.old if text.strip()}
        for index, edits in enumerate(trajectory_edits(trajectory), start=1)
    }
    earlier = EarlierText(trajectory, set().union(*wanted.values()))
    out: dict[int, frozenset[str]] = {}
    for index, old in wanted.items():
        held = frozenset(text for text in old if earlier.held_before(text, index - 1))
        if held:
            out[index] = held
    return out


@dataclass(frozen=True)
class StateTruth:
    changed: frozenset[str]
    """Paths edited, created or deleted in this step or before, as the actions wrote them."""
    failing: frozenset[str]
    """Tests failing after this step, by the name every runner prints (`test_a` of `pkg.Case.test_a`,
    `test_b[1]` of `t.py::test_b[1]`): a context naming a test the way its output did counts."""


def state_truth(trajectory: Trajectory) -> dict[int, StateTruth]:
    """Per step index (1 = the first step), what any context for the next call should still name."""
    tracker = TestTracker()
    changed: set[str] = set()
    out: dict[int, StateTruth] = {}
    for index, (step, edits) in enumerate(
        zip(trajectory.steps, trajectory_edits(trajectory), strict=True), start=1
    ):
        changed.update(edit.path for edit in edits)
        changed.update(find_deletions(step.action))
        changed.update(find_copies(step.action))
        boundary.verdict(tracker, index, step.action, step.observation)  # a parser that fails says nothing
        out[index] = StateTruth(
            frozenset(changed), frozenset(test_name(test) for test, _ in tracker.failing())
        )
    return out


def test_name(test: str) -> str:
    return test.rsplit("::", 1)[-1] if "::" in test else test.rsplit(".", 1)[-1]


def cut(context: WovenContext) -> bool:
    return context.tokens < context.full_history_tokens


def unmarked_drop(context: WovenContext) -> bool:
    """Steps were dropped whole and nothing in the context says so."""
    if not any(d.mode == "dropped" for d in context.decisions):
        return False
    return not any(isinstance(m.get("content"), str) and OMITTED in m["content"] for m in context.messages)
