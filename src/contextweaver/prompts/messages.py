"""The four memory requests as chat messages: parents, node summary, dependency summary, fused annotation."""

from __future__ import annotations

from collections.abc import Sequence

from contextweaver.prompts.render import (
    ANALYZER_RULES,
    SUMMARY_RULES,
    candidate_block,
    candidates_section,
    new_step_block,
    task_section,
)
from contextweaver.records import Message, Node

PARENT_REPLY = '{"parents": [{"id": "N3", "confidence": 0.9, "reasoning": "uses the traceback N3 printed"}]}'


def parent_messages(node: Node, candidates: Sequence[Node], task: str, m: int) -> list[Message]:
    """One listwise request: the task, the new node, and every candidate (paper, section 4)."""
    user = "\n\n".join(
        [
            task_section(task),
            f"NEW STEP:\n{new_step_block(node)}",
            candidates_section(candidates),
            f"INSTRUCTIONS:\nSelect at most {m} parents of {node.id}, most likely first, with a confidence in "
            f"[0, 1] and a one-sentence reasoning each. Reply as JSON:\n{PARENT_REPLY}",
        ]
    )
    return [{"role": "system", "content": ANALYZER_RULES}, {"role": "user", "content": user}]


def summary_messages(node: Node, task: str) -> list[Message]:
    """A node summary conditioned on the task: what this step did and found, for later dependency judgements."""
    user = "\n\n".join(
        [
            task_section(task),
            f"STEP:\n{new_step_block(node, with_summary=False)}",
            "INSTRUCTIONS:\nSummarize what this step did and what it found, in at most two sentences (under 50 "
            'words), as it matters for the task. Reply as JSON: {"summary": "..."}',
        ]
    )
    return [{"role": "system", "content": SUMMARY_RULES}, {"role": "user", "content": user}]


def dependency_messages(node: Node, parents: Sequence[Node]) -> list[Message]:
    """Incremental: only the parents' cached dependency summaries plus this node's summary (paper, step 4)."""
    blocks = "\n\n".join(candidate_block(p) for p in sorted(parents, key=lambda n: n.index))
    user = "\n\n".join(
        [
            f"PARENTS:\n{blocks}",
            f"STEP:\n[NEW {node.id}]\nsummary: {node.summary or '(none)'}",
            "INSTRUCTIONS:\nWrite the dependency summary of this step: the chain of findings from its parents "
            "that leads to it, ending with what this step adds, in under 80 words. Reply as JSON: "
            '{"dependency_summary": "..."}',
        ]
    )
    return [{"role": "system", "content": SUMMARY_RULES}, {"role": "user", "content": user}]


def annotation_messages(node: Node, candidates: Sequence[Node], task: str, m: int) -> list[Message]:
    """Fused mode: one request returns summary, parents and dependency summary (the paper needs three)."""
    user = "\n\n".join(
        [
            task_section(task),
            f"NEW STEP:\n{new_step_block(node, with_summary=False)}",
            candidates_section(candidates),
            "INSTRUCTIONS:\n"
            f"1. summary: what {node.id} did and found, at most two sentences, as it matters for the task.\n"
            f"2. parents: at most {m} candidates {node.id} depends on, most likely first, each with a "
            "confidence in [0, 1] and a one-sentence reasoning.\n"
            "3. dependency_summary: the chain of findings from the chosen parents' dependency summaries that "
            "leads to this step, ending with what it adds, under 80 words.\n"
            'Reply as JSON: {"summary": "...", "parents": [{"id": "N3", "confidence": 0.9, "reasoning": "..."}], '
            '"dependency_summary": "..."}',
        ]
    )
    return [
        {"role": "system", "content": ANALYZER_RULES + "\n\n" + SUMMARY_RULES},
        {"role": "user", "content": user},
    ]
