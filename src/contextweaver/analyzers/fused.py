"""Fused annotation: one LLM call per step returns the node summary, the parents and the dependency summary.

The paper's pipeline needs three calls; this needs one, and (unless the analyzer is `llm`) it shows the
model only the heuristic's top C candidates, so the prompt stays bounded. The dependency summary is
asked of the same call from the candidates' cached dependency summaries, so it stays incremental.
Unusable replies get one corrective retry, then heuristic parents and extractive summaries, counted.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from contextweaver.analyzers.heuristic import HeuristicAnalyzer
from contextweaver.analyzers.hybrid import top_c
from contextweaver.analyzers.prompts import (
    ReplyError,
    annotation_messages,
    annotation_schema,
    ask_json,
    bump,
    new_stats,
    parse_parents,
    parse_text,
)
from contextweaver.analyzers.prompts.render import DEPENDENCY_TOKENS, SUMMARY_TOKENS
from contextweaver.annotate import Annotation
from contextweaver.config import WeaverConfig
from contextweaver.models import ModelError, at_step, build_model
from contextweaver.protocols import Model
from contextweaver.summaries.extractive import ExtractiveSummarizer
from contextweaver.types import Node, Parent

if TYPE_CHECKING:
    from contextweaver.graph import DependencyGraph

log = logging.getLogger("contextweaver.analyzers")


class FusedAnnotator:
    """`annotate(node, candidates, graph, task, m) -> Annotation` with one call (used when llm_mode == "fused")."""

    name = "fused"

    def __init__(self, config: WeaverConfig, model: Model | None = None) -> None:
        self.config = config
        self.model = model if model is not None else build_model(self.config.memory_model)
        self.heuristic = HeuristicAnalyzer(self.config)
        self.extractive = ExtractiveSummarizer(self.config)
        self.stats: dict[str, int] = new_stats()
        self.fallback_steps: list[int] = []

    def annotate(
        self, node: Node, candidates: Sequence[Node], graph: DependencyGraph, task: str, m: int
    ) -> Annotation:
        if not candidates:  # the root: no parents, its own words summarize it
            summary = self.extractive.summarize(node, task)
            return Annotation(summary, [], summary)
        shown = list(candidates)
        if self.config.analyzer != "llm":
            shown = top_c(self.heuristic, node, candidates, graph, self.config.hybrid_top_c)
        valid = {n.index for n in shown}

        def read(obj: dict[str, Any]) -> Annotation:
            parents = parse_parents(obj, valid, m, self.stats)
            summary = parse_text(obj, "summary", SUMMARY_TOKENS)
            return Annotation(summary, parents, parse_text(obj, "dependency_summary", DEPENDENCY_TOKENS))

        at_step(self.model, node.index)
        try:
            return ask_json(
                self.model,
                annotation_messages(node, shown, task, m),
                annotation_schema(m, [n.id for n in shown]),
                read,
                self.stats,
                max_tokens=min(
                    self.config.memory_model.max_tokens, SUMMARY_TOKENS + DEPENDENCY_TOKENS + 120 * m + 80
                ),
            )
        except (ReplyError, ModelError) as exc:
            return self._fall_back(node, candidates, graph, task, m, exc)

    def _fall_back(
        self,
        node: Node,
        candidates: Sequence[Node],
        graph: DependencyGraph,
        task: str,
        m: int,
        exc: Exception,
    ) -> Annotation:
        bump(self.stats, "fallbacks")
        self.fallback_steps.append(node.index)
        cause = type(exc).__name__ if isinstance(exc, ModelError) else getattr(exc, "kind", "reply")
        log.warning("fused annotator: step %d falls back to heuristic + extractive (%s)", node.index, cause)
        summary = self.extractive.summarize(node, task)
        parents = [
            Parent(p.index, p.confidence, f"fallback to heuristic ({cause}): {p.reason}")
            for p in self.heuristic.select_parents(node, candidates, graph, task, m)
        ]
        with_summary = replace(node, summary=summary)
        dependency = self.extractive.dependency_summary(with_summary, [graph.node(p.index) for p in parents])
        return Annotation(summary, parents, dependency)
