"""Adaptive selection: per step, blend recency and ancestry from what the recent graph looks like.

A linear debug loop (each step builds on the one before it, one or two files in play) is served best
by the latest outputs; multi-file, long-range work by the dependency ancestry. The selector reads
only the last few nodes' parents and facts, so its cost per step does not grow with the history:
it gives `r` of its W slots to the steps right before the current one and fills the rest with
ancestors, nearest first. The decision and its signals are written into the plan's notes.
"""

from __future__ import annotations

from dataclasses import dataclass

from contextweaver.config import WeaverConfig
from contextweaver.nodes.graph import DependencyGraph
from contextweaver.weaving.plan import Plan


@dataclass(frozen=True)
class Shape:
    """Graph signals over the last few steps."""

    chained: int
    """Steps among the last `looked` whose parents include the step right before them."""
    looked: int
    files: int
    """Distinct files the last `looked` steps mention, view or edit."""


def recent_shape(graph: DependencyGraph, lookback: int) -> Shape:
    last = len(graph) - 1
    nodes = [graph.node(i) for i in range(last, max(0, last - lookback), -1)]
    files: set[str] = set()
    for node in nodes:
        files |= node.facts.files | node.facts.edited_files | node.facts.viewed_files
    chained = sum(1 for node in nodes if node.index - 1 in node.parent_ids)
    return Shape(chained, len(nodes), len(files))


class AdaptiveSelector:
    """Recency window of `linear_recent` steps in a chain-like, few-file phase, else `structural_recent`."""

    name = "adaptive"
    lookback = 3
    few_files = 3
    """Fewer distinct files than this (with a chain-like recent graph) counts as a linear loop."""
    linear_recent = 3
    structural_recent = 1

    def recent_slots(self, shape: Shape, window: int) -> tuple[int, str]:
        linear = shape.chained >= shape.looked - 1 and shape.files < self.few_files
        kind = "linear loop" if linear else "structural"
        slots = self.linear_recent if linear else self.structural_recent
        why = f"{kind}: {shape.chained}/{shape.looked} recent steps chain on their predecessor, {shape.files} file(s) in play"
        return min(slots, window), why

    def plan(self, graph: DependencyGraph, config: WeaverConfig) -> Plan:
        k = len(graph) - 1
        window = config.window
        slots, why = self.recent_slots(recent_shape(graph, self.lookback), window)
        full = [(k, "current step")]
        chosen = {k}
        for i in range(k - 1, k - 1 - slots, -1):
            full.append((i, f"recent ({why})"))
            chosen.add(i)
        for ancestor, child in graph.ancestry_via(k, window + slots).items():
            if len(full) > window:
                break
            if ancestor in chosen:
                continue
            chosen.add(ancestor)
            relation = f"parent of step {k}" if child == k else f"ancestor of step {k} via step {child}"
            full.append((ancestor, relation))
        return Plan(
            full=full,
            compressed_reason=f"neither recent nor among the ancestors of step {k}",
            notes=[f"adaptive: {slots} recent + {len(full) - 1 - slots} ancestors ({why})"],
            ahead_of_edits=frozenset(chosen),
        )
