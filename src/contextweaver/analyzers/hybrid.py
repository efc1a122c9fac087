"""Hybrid analyzer: the heuristic ranks every candidate, the LLM judges only the top C.

Why: the paper's listwise prompt grows with the history; this one stays bounded (C blocks of capped
summaries), so the cost per step is flat however long the run gets.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from contextweaver.analyzers.heuristic import HeuristicAnalyzer
from contextweaver.analyzers.llm import LLMAnalyzer
from contextweaver.records import Node

if TYPE_CHECKING:
    from contextweaver.nodes.graph import DependencyGraph


def top_c(
    heuristic: HeuristicAnalyzer, node: Node, candidates: Sequence[Node], graph: DependencyGraph, c: int
) -> list[Node]:
    """The C candidates worth judging: the heuristic's best, then the root (the task) and the most recent
    steps to fill the room, in chronological order."""
    if len(candidates) <= c:
        return list(candidates)
    by_index = {n.index: n for n in candidates}
    chosen = [p.index for p in heuristic.rank(node, candidates, graph) if p.index in by_index][:c]
    fillers = [0] if 0 in by_index else []
    fillers += sorted(by_index, reverse=True)
    for index in fillers:
        if len(chosen) >= c:
            break
        if index not in chosen:
            chosen.append(index)
    return [by_index[i] for i in sorted(chosen)]


class HybridAnalyzer(LLMAnalyzer):
    """The `llm` analyzer over the heuristic's top `config.hybrid_top_c` candidates."""

    name = "hybrid"

    def shortlist(self, node: Node, candidates: Sequence[Node], graph: DependencyGraph) -> list[Node]:
        return top_c(self.heuristic, node, candidates, graph, self.config.hybrid_top_c)
