"""Next-step evidence recall (EVALUATION.md, metric 2): was what the next action used in the context?"""

from __future__ import annotations

import re
from dataclasses import dataclass

from contextweaver.facts import is_code_like
from contextweaver.formats.base import Trajectory

_WORD = re.compile(r"[A-Za-z0-9_./-]*[A-Za-z0-9_]")
_NUMBER = re.compile(r"(?<![\w.])\d{2,}(?![\w])")
_QUOTED = re.compile(r"""'([^'\n]{4,})'|"([^"\n]{4,})\"""")


def evidence_items(text: str) -> set[str]:
    """Code-like tokens, numbers of 2+ digits, quoted strings of 4+ characters."""
    items = {w for w in (m.group().strip("./-") for m in _WORD.finditer(text)) if is_code_like(w)}
    items.update(_NUMBER.findall(text))
    items.update(a or b for a, b in _QUOTED.findall(text))
    return items


@dataclass(frozen=True)
class StepEvidence:
    """The items step `index` (the next action) needed from earlier observations."""

    index: int
    items: frozenset[str]


def next_step_evidence(trajectory: Trajectory, history: bool = False) -> list[StepEvidence]:
    """For each step k+1 >= 2: items of its thought/action found in an earlier observation only.

    Items also in the system prompt, the task or an earlier thought/action are dropped (those are
    always in every context), and so are items found in more than half of the earlier observations.
    `history=True` gives history evidence: items said in an earlier thought or action count too (a
    budget may drop old steps whole, which observation evidence cannot see).
    """
    steps = trajectory.steps
    return [
        StepEvidence(
            nxt + 1,
            frozenset(
                from_earlier_observations(
                    evidence_items(f"{steps[nxt].thought}\n{steps[nxt].action}"), trajectory, nxt, history
                )
            ),
        )
        for nxt in range(1, len(steps))
    ]


def from_earlier_observations(
    items: set[str], trajectory: Trajectory, nxt: int, history: bool = False
) -> set[str]:
    """The items that only earlier observations (steps before index `nxt`, 0-based) could supply:
    not in the system prompt, the task or an earlier thought/action, and not in most observations.
    With `history`, items from an earlier thought/action are kept instead of dropped."""
    always = f"{trajectory.system}\n{trajectory.task}"
    said_before = "\n".join(f"{s.thought}\n{s.action}" for s in trajectory.steps[:nxt])
    observations = [s.observation for s in trajectory.steps[:nxt]]
    kept = set()
    for item in items:
        if item in always:
            continue
        said = item in said_before
        if said and not history:
            continue
        seen = sum(1 for o in observations if item in o)
        if (seen or said) and seen <= len(observations) / 2:
            kept.add(item)
    return kept


def covered(items: frozenset[str], context_text: str) -> int:
    return sum(1 for item in items if item in context_text)


def history_evidence(trajectory: Trajectory) -> dict[int, frozenset[str]]:
    """EVALUATION.md's history evidence: next-step items found in any earlier step's text (thoughts
    and actions too), never those in the system prompt or the task, nor in most earlier outputs."""
    always = f"{trajectory.system}\n{trajectory.task}"
    steps = trajectory.steps
    out: dict[int, frozenset[str]] = {}
    earlier = ""
    for nxt in range(1, len(steps)):
        previous = steps[nxt - 1]
        earlier += f"\n{previous.thought}\n{previous.action}\n{previous.observation}"
        observations = [s.observation for s in steps[:nxt]]
        kept = set()
        for item in evidence_items(f"{steps[nxt].thought}\n{steps[nxt].action}"):
            if item in always or item not in earlier:
                continue
            if sum(1 for o in observations if item in o) <= len(observations) / 2:
                kept.add(item)
        out[nxt + 1] = frozenset(kept)
    return out
