"""Per-step memory work: summary, parents, dependency summary (the paper's three calls), and the one
place that decides which annotator a configuration builds and whether it calls the memory model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from contextweaver.analyzers import ANALYZERS, build_analyzer
from contextweaver.records import Annotation, Node
from contextweaver.summaries import SUMMARIZERS, build_summarizer

if TYPE_CHECKING:
    from contextweaver.config import WeaverConfig
    from contextweaver.nodes.graph import DependencyGraph
    from contextweaver.protocols import Analyzer, Annotator, Model, Summarizer


class ThreeCallAnnotator:
    """Summary, then parents (the analyzer reads the new summary), then the dependency summary."""

    def __init__(self, analyzer: Analyzer, summarizer: Summarizer) -> None:
        self.analyzer = analyzer
        self.summarizer = summarizer

    def annotate(
        self, node: Node, candidates: Sequence[Node], graph: DependencyGraph, task: str, m: int
    ) -> Annotation:
        node.summary = self.summarizer.summarize(node, task)
        parents = self.analyzer.select_parents(node, candidates, graph, task, m)[:m]
        parent_nodes = [graph.node(p.index) for p in parents]
        return Annotation(node.summary, parents, self.summarizer.dependency_summary(node, parent_nodes))


def needs_model(config: WeaverConfig) -> bool:
    """Whether a configured component calls the memory model: each analyzer and summarizer class
    declares it (`uses_model`), so this is the one place the question is answered."""
    return bool(ANALYZERS.get(config.analyzer).uses_model or SUMMARIZERS.get(config.summarizer).uses_model)


def build_annotator(config: WeaverConfig, model: Model | None) -> Annotator:
    """`llm_mode: fused` folds the three calls into one for an analyzer that calls the model; an analyzer
    that calls none (the heuristic) keeps the three steps, which then cost no model call."""
    if config.llm_mode == "fused" and ANALYZERS.get(config.analyzer).uses_model:
        from contextweaver.analyzers.fused import FusedAnnotator

        return FusedAnnotator(config, model)
    return ThreeCallAnnotator(build_analyzer(config, model), build_summarizer(config, model))
