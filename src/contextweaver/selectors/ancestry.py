"""The paper's selection: the current step plus its ancestry (BFS over parents, at most W)."""

from __future__ import annotations

from contextweaver.config import WeaverConfig
from contextweaver.nodes.graph import DependencyGraph
from contextweaver.weaving.plan import Plan


class AncestrySelector:
    name = "ancestry"

    def plan(self, graph: DependencyGraph, config: WeaverConfig) -> Plan:
        k = len(graph) - 1
        window = config.window
        full = [(k, "current step")]
        for ancestor, child in graph.ancestry_via(k, window).items():
            edge = next(p for p in graph.node(child).parents if p.index == ancestor)
            relation = f"parent of step {k}" if child == k else f"ancestor of step {k} via step {child}"
            full.append((ancestor, f"{relation} ({edge.reason})"))
        return Plan(full=full, compressed_reason=f"not among the W={window} ancestors of step {k}")
