"""Fused annotation: one LLM call per step returns the node summary, the parents and the dependency summary.

The paper's pipeline needs three calls; this needs one, and (unless the analyzer is `llm`) it shows the
model only the heuristic's top C candidates, so the prompt stays bounded. The dependency summary is
asked of the same call from the candidates' cached dependency summaries, so it stays incremental.
Unusable replies get one corrective retry, then heuristic parents and extractive summaries, counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from contextweaver.analyzers.hybrid import top_c
from contextweaver.analyzers.llm import HeuristicBackedJudge
from contextweaver.config import WeaverConfig
from contextweaver.models import ModelError, at_step
from contextweaver.prompts import (
    ReplyError,
    annotation_messages,
    annotation_schema,
    ask_json,
    parse_parents,
    parse_text,
)
from contextweaver.prompts.render import DEPENDENCY_TOKENS, SUMMARY_TOKENS
from contextweaver.protocols import Model
from contextweaver.records import Annotation, Node
from contextweaver.summaries.extractive import ExtractiveSummarizer

if TYPE_CHECKING:
    from contextweaver.nodes.graph import DependencyGraph


class FusedAnnotator(HeuristicBackedJudge):
    """`annotate(node, candidates, graph, task, m) -> Annotation` with one call (used when llm_mode == "fused")."""

    name = "fused"
    role = "annotator"
    falls_back_to = "heuristic + extractive"

    def __init__(self, config: WeaverConfig, model: Model | None = None) -> None:
        super().__init__(config, model)
        self.extractive = ExtractiveSummarizer(self.config)

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
            summary = self.extractive.summarize(node, task)
            parents = self.heuristic_fallback(node, candidates, graph, task, m, exc)
            with_summary = replace(node, summary=summary)
            dependency = self.extractive.dependency_summary(
                with_summary, [graph.node(p.index) for p in parents]
            )
            return Annotation(summary, parents, dependency)
