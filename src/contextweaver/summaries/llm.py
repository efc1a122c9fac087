"""LLM summaries: node summaries conditioned on the task, and incremental dependency summaries built only
from the parents' cached dependency summaries plus the node's own summary (paper, Algorithm 1 step 4).

Neither ever enters the agent's context: they feed the analyzer. Failures fall back to the extractive
summarizer after one corrective retry, counted in `stats`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from contextweaver.analyzers.prompts import (
    ReplyError,
    ask_json,
    bump,
    dependency_messages,
    dependency_schema,
    new_stats,
    parse_text,
    summary_messages,
    summary_schema,
)
from contextweaver.analyzers.prompts.render import DEPENDENCY_TOKENS, SUMMARY_TOKENS
from contextweaver.config import WeaverConfig
from contextweaver.models import ModelError, at_step, build_model
from contextweaver.protocols import Model
from contextweaver.summaries.extractive import ExtractiveSummarizer
from contextweaver.types import Node

log = logging.getLogger("contextweaver.summaries")


class LLMSummarizer:
    """Two calls per step (summary, dependency summary); the root and parentless nodes cost none."""

    name = "llm"

    def __init__(self, config: WeaverConfig, model: Model | None = None) -> None:
        self.config = config
        self.model = model if model is not None else build_model(self.config.memory_model)
        self.extractive = ExtractiveSummarizer(self.config)
        self.stats: dict[str, int] = new_stats()

    def summarize(self, node: Node, task: str) -> str:
        if node.index == 0:  # the root is the task itself: its own words are the best summary
            return self.extractive.summarize(node, task)
        at_step(self.model, node.index)
        try:
            return ask_json(
                self.model,
                summary_messages(node, task),
                summary_schema(),
                lambda obj: parse_text(obj, "summary", SUMMARY_TOKENS),
                self.stats,
                max_tokens=min(self.config.memory_model.max_tokens, SUMMARY_TOKENS + 40),
            )
        except (ReplyError, ModelError) as exc:
            self._note_fallback(node, "summary", exc)
            return self.extractive.summarize(node, task)

    def dependency_summary(self, node: Node, parents: Sequence[Node]) -> str:
        real = [p for p in parents if p.index != 0]
        if not real:  # hangs off the task: the chain starts here
            return node.summary
        at_step(self.model, node.index)
        try:
            return ask_json(
                self.model,
                dependency_messages(node, real),
                dependency_schema(),
                lambda obj: parse_text(obj, "dependency_summary", DEPENDENCY_TOKENS),
                self.stats,
                max_tokens=min(self.config.memory_model.max_tokens, DEPENDENCY_TOKENS + 40),
            )
        except (ReplyError, ModelError) as exc:
            self._note_fallback(node, "dependency summary", exc)
            return self.extractive.dependency_summary(node, parents)

    def _note_fallback(self, node: Node, what: str, exc: Exception) -> None:
        bump(self.stats, "fallbacks")
        cause = type(exc).__name__ if isinstance(exc, ModelError) else getattr(exc, "kind", "reply")
        log.warning("llm summarizer: step %d %s falls back to extractive (%s)", node.index, what, cause)
