"""The paper's Logical Dependency Analyzer: one listwise LLM call over the candidates, JSON back, top m.

Unusable replies (malformed JSON, unknown ids, empty) get one corrective retry; then, like model
errors and an open circuit, the heuristic analyzer answers. Every fallback is counted in `stats`,
logged, and marked in the parents' reasons, so it is never silent.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from contextweaver.analyzers.heuristic import HeuristicAnalyzer
from contextweaver.config import WeaverConfig
from contextweaver.models import ModelError, at_step, require_model
from contextweaver.prompts import (
    ReplyError,
    ask_json,
    bump,
    fallback_cause,
    new_stats,
    parent_messages,
    parents_schema,
)
from contextweaver.prompts.parse import parse_parents
from contextweaver.protocols import Model
from contextweaver.records import Node, Parent

if TYPE_CHECKING:
    from contextweaver.nodes.graph import DependencyGraph

log = logging.getLogger("contextweaver.analyzers")


class HeuristicBackedJudge:
    """What the LLM analyzers and the fused annotator share: the memory model, the heuristic that answers
    when the model cannot, and fallbacks counted, logged and labelled (SPEC 4: never silently recency)."""

    name = "llm"
    uses_model = True
    role = "analyzer"
    falls_back_to = "heuristic parents"

    def __init__(self, config: WeaverConfig, model: Model | None = None) -> None:
        self.config = config
        self.model = require_model(model, type(self).__name__)
        self.heuristic = HeuristicAnalyzer(self.config)
        self.stats: dict[str, int] = new_stats()
        self.fallback_steps: list[int] = []
        """Steps whose parents came from the heuristic, in order (for reports)."""

    def heuristic_fallback(
        self,
        node: Node,
        candidates: Sequence[Node],
        graph: DependencyGraph,
        task: str,
        m: int,
        exc: Exception,
    ) -> list[Parent]:
        """The heuristic's parents, each reason saying that (and why) the model's answer was not used."""
        bump(self.stats, "fallbacks")
        self.fallback_steps.append(node.index)
        cause = fallback_cause(exc)
        log.warning(
            "%s %s: step %d falls back to %s (%s)",
            self.name,
            self.role,
            node.index,
            self.falls_back_to,
            cause,
        )
        parents = self.heuristic.select_parents(node, candidates, graph, task, m)
        return [
            Parent(p.index, p.confidence, f"fallback to heuristic ({cause}): {p.reason}") for p in parents
        ]


class LLMAnalyzer(HeuristicBackedJudge):
    """Sees every candidate (paper fidelity: the prompt grows with the history; see `hybrid` for bounded)."""

    name = "llm"

    def shortlist(self, node: Node, candidates: Sequence[Node], graph: DependencyGraph) -> list[Node]:
        """The candidates shown to the model: all of them here."""
        return list(candidates)

    def select_parents(
        self, node: Node, candidates: Sequence[Node], graph: DependencyGraph, task: str, m: int
    ) -> list[Parent]:
        if not candidates:
            return []
        if len(candidates) == 1:  # nothing to judge: no call
            return [Parent(candidates[0].index, 1.0, "only candidate")]
        shown = self.shortlist(node, candidates, graph)
        valid = {n.index for n in shown}
        at_step(self.model, node.index)
        try:
            return ask_json(
                self.model,
                parent_messages(node, shown, task, m),
                parents_schema(m, [n.id for n in shown]),
                lambda obj: parse_parents(obj, valid, m, self.stats),
                self.stats,
                max_tokens=min(self.config.memory_model.max_tokens, 120 * m + 60),
            )
        except (ReplyError, ModelError) as exc:
            return self.heuristic_fallback(node, candidates, graph, task, m, exc)
