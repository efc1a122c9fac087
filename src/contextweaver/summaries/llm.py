"""LLM summaries: node summaries conditioned on the task, and incremental dependency summaries built only
from the parents' cached dependency summaries plus the node's own summary (paper, Algorithm 1 step 4).

Neither ever enters the agent's context: they feed the analyzer. Failures fall back to the extractive
summarizer after one corrective retry, counted in `stats`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from contextweaver.config import WeaverConfig
from contextweaver.models import ModelError, at_step, require_model
from contextweaver.prompts import (
    ReplyError,
    ask_json,
    bump,
    dependency_messages,
    dependency_schema,
    fallback_cause,
    new_stats,
    parse_text,
    summary_messages,
    summary_schema,
)
from contextweaver.prompts.render import DEPENDENCY_TOKENS, SUMMARY_TOKENS
from contextweaver.protocols import Model
from contextweaver.records import Message, Node
from contextweaver.summaries.extractive import ExtractiveSummarizer

log = logging.getLogger("contextweaver.summaries")


class LLMSummarizer:
    """Two calls per step (summary, dependency summary); the root and parentless nodes cost none."""

    name = "llm"
    uses_model = True

    def __init__(self, config: WeaverConfig, model: Model | None = None) -> None:
        self.config = config
        self.model = require_model(model, type(self).__name__)
        self.extractive = ExtractiveSummarizer(self.config)
        self.stats: dict[str, int] = new_stats()

    def summarize(self, node: Node, task: str) -> str:
        if node.index == 0:  # the root is the task itself: its own words are the best summary
            return self.extractive.summarize(node, task)
        return self._ask_text(
            node,
            "summary",
            summary_messages(node, task),
            summary_schema(),
            SUMMARY_TOKENS,
            lambda: self.extractive.summarize(node, task),
        )

    def dependency_summary(self, node: Node, parents: Sequence[Node]) -> str:
        real = [p for p in parents if p.index != 0]
        if not real:  # hangs off the task: the chain starts here
            return node.summary
        return self._ask_text(
            node,
            "dependency summary",
            dependency_messages(node, real),
            dependency_schema(),
            DEPENDENCY_TOKENS,
            lambda: self.extractive.dependency_summary(node, parents),
        )

    def _ask_text(
        self,
        node: Node,
        what: str,
        messages: list[Message],
        schema: dict[str, Any],
        limit: int,
        extractive: Callable[[], str],
    ) -> str:
        """One JSON field of `limit` tokens (the field is named like `what`), else the extractive text."""
        field = what.replace(" ", "_")
        at_step(self.model, node.index)
        try:
            return ask_json(
                self.model,
                messages,
                schema,
                lambda obj: parse_text(obj, field, limit),
                self.stats,
                max_tokens=min(self.config.memory_model.max_tokens, limit + 40),
            )
        except (ReplyError, ModelError) as exc:
            bump(self.stats, "fallbacks")
            cause = fallback_cause(exc)
            log.warning("llm summarizer: step %d %s falls back to extractive (%s)", node.index, what, cause)
            return extractive()
