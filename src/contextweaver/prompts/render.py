"""Prompt text for the memory model. One block format serves every request:

    [NEW N15]            the step being annotated (raw thought/action/observation, clipped)
    [N3] status: passed  an earlier step: its summary and dependency summary only

The deterministic fake model (contextweaver.models.fake_rules) reads the same format.
"""

from __future__ import annotations

from collections.abc import Sequence

from contextweaver.nodes.render import trim_text
from contextweaver.records import Node
from contextweaver.tokens import encode, get_encoding

SUMMARY_TOKENS = 80
"""Cap on each summary shown in a prompt and on each summary the model writes."""
DEPENDENCY_TOKENS = 120
"""Cap on each dependency summary (it is rebuilt from parents each step, so it must not snowball)."""
TASK_TOKENS = 400
STEP_TOKENS = {"thought": 150, "action": 200, "observation": 350}

ANALYZER_RULES = """\
You are the Logical Dependency Analyzer of an agent's memory. A step depends on an earlier step when it
uses that step's result (a value, path, error message or finding it produced), returns to the issue that
step raised, or continues its line of reasoning.
Rules:
1. Judge information flow, not file similarity: two steps that touch the same file are not dependent
   unless one uses what the other found or did.
2. Prefer branching over chaining for exploration: a new search or inspection usually hangs off the step
   that motivated it (often the task N0 or a planning step), not off the previous exploration step.
3. Phase transitions (exploring -> editing, editing -> testing, a failing test -> its fix) need broader
   context: choose the steps whose findings the new phase relies on, possibly several.
4. Choose only ids listed under CANDIDATES. When no earlier step is used, choose N0 (the task).
Reply with one JSON object and nothing else."""

SUMMARY_RULES = """\
You write the memory notes of a software agent. Notes are for a dependency analyzer, never shown to the
agent. Keep identifiers verbatim (paths, function names, error strings, test ids). Reply with one JSON
object and nothing else."""


def clip(text: str, max_tokens: int) -> str:
    """The head of `text` within `max_tokens` (summaries read best from their start)."""
    text = " ".join(text.split())
    enc = get_encoding()
    ids = encode(text)
    if len(ids) <= max_tokens:
        return text
    return enc.decode(ids[:max_tokens]).rstrip() + " ..."


def new_step_block(node: Node, *, with_summary: bool = True) -> str:
    """The new step, raw: thought, action, and a head/tail-trimmed observation (errors sit at the tail)."""
    step = node.step
    lines = [f"[NEW {node.id}]"]
    if with_summary and node.summary:
        lines.append(f"summary: {clip(node.summary, SUMMARY_TOKENS)}")
    if step.kind == "user":
        lines.append(f"user message: {clip(step.observation, STEP_TOKENS['observation'])}")
        return "\n".join(lines)
    if step.thought:
        lines.append(f"thought: {clip(step.thought, STEP_TOKENS['thought'])}")
    if step.action:
        lines.append(f"action: {clip(step.action, STEP_TOKENS['action'])}")
    observation = trim_text(step.observation.strip(), STEP_TOKENS["observation"]) if step.observation else ""
    lines.append(f"observation: {observation or '(empty)'}")
    return "\n".join(lines)


def short_summary(node: Node) -> str:
    """The node's summary, or a stand-in when none was written (the extractive summarizer may leave it empty)."""
    if node.summary:
        return clip(node.summary, SUMMARY_TOKENS)
    if node.index == 0:
        return "the task (see TASK)"
    source = node.step.action or node.step.thought or node.step.observation
    return clip(source, SUMMARY_TOKENS) or "(no summary)"


def candidate_block(node: Node) -> str:
    status = getattr(node.validation_status, "value", str(node.validation_status))
    dependency = clip(node.dependency_summary, DEPENDENCY_TOKENS) if node.dependency_summary else "-"
    return f"[{node.id}] status: {status}\nsummary: {short_summary(node)}\ndependency summary: {dependency}"


def candidates_section(candidates: Sequence[Node]) -> str:
    ordered = sorted(candidates, key=lambda n: n.index)
    return "CANDIDATES (earlier steps; N0 is the task itself):\n" + "\n\n".join(
        candidate_block(n) for n in ordered
    )


def task_section(task: str) -> str:
    return f"TASK:\n{trim_text(task.strip(), TASK_TOKENS)}"
