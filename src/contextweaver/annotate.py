"""Per-step memory work: summary, parents, dependency summary (the paper's three calls)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from contextweaver.types import Node, Parent

if TYPE_CHECKING:
    from contextweaver.graph import DependencyGraph
    from contextweaver.protocols import Analyzer, Summarizer


@dataclass(frozen=True)
class Annotation:
    summary: str
    parents: list[Parent]
    dependency_summary: str


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
