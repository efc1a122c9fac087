"""Zero-LLM summaries: the step's intent, command and outcome in one line, from its own text."""

from __future__ import annotations

from collections.abc import Sequence

from contextweaver.config import WeaverConfig
from contextweaver.protocols import Model
from contextweaver.records import Node

SUMMARY_CHARS = 240
DEPENDENCY_SUMMARY_CHARS = 800


def _first_sentence(text: str) -> str:
    text = " ".join(text.replace("THOUGHT:", "").split())
    for stop in (". ", "! ", "? "):
        if stop in text:
            return text[: text.index(stop) + 1]
    return text


class ExtractiveSummarizer:
    """Builds summaries from real records only (identifiers verbatim), at no LLM cost."""

    name = "extractive"
    uses_model = False

    def __init__(self, config: WeaverConfig | None = None, model: Model | None = None) -> None:
        self.stats: dict[str, int] = {}

    def summarize(self, node: Node, task: str) -> str:
        step = node.step
        if step.kind == "user":
            return f"message: {_first_sentence(step.observation)}"[:SUMMARY_CHARS]
        parts = [_first_sentence(step.thought)]
        if step.action:
            parts.append(f"ran `{step.action.splitlines()[0][:100]}`")
        if node.facts.errors:
            parts.append(f"saw {sorted(node.facts.errors)[0][:80]}")
        if node.test_results:
            failed = sum(1 for s in node.test_results.values() if s.is_failure)
            parts.append(f"tests: {len(node.test_results) - failed} ok, {failed} failing")
        return "; ".join(p for p in parts if p)[:SUMMARY_CHARS]

    def dependency_summary(self, node: Node, parents: Sequence[Node]) -> str:
        """The parents' dependency summaries (already bounded) plus this node's summary, capped."""
        inherited = " | ".join(p.dependency_summary or p.summary for p in parents if p.index != 0)
        own = f"[{node.index}] {node.summary}"
        if not inherited:
            return own
        room = DEPENDENCY_SUMMARY_CHARS - len(own) - 3
        return f"{inherited[-room:]} > {own}" if room > 0 else own[:DEPENDENCY_SUMMARY_CHARS]
