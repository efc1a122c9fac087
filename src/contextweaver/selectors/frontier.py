"""Frontier selection: the steps the most recent steps depend on (ours, measured against ancestry).

Walk back from the current step; each step brings itself and its parents, so an observation stays
in full while recent steps keep using it, and leaves once nothing recent relies on it. This is the
ancestry of the recent frontier rather than of the current step alone. Cost: O(W x m) per context.
"""

from __future__ import annotations

from contextweaver.config import WeaverConfig
from contextweaver.nodes.graph import DependencyGraph
from contextweaver.weaving.plan import Plan


class FrontierSelector:
    name = "frontier"

    def plan(self, graph: DependencyGraph, config: WeaverConfig) -> Plan:
        k = len(graph) - 1
        window = config.window
        full = [(k, "current step")]
        chosen = {k}
        for user in range(k, 0, -1):
            node = graph.node(user)
            picks = [(user, "recent step")] if user != k else []
            picks += [
                (p.index, f"used by step {user} ({p.reason})")
                for p in sorted(node.parents, key=lambda p: -p.index)
            ]
            for index, reason in picks:
                if index and index not in chosen:
                    chosen.add(index)
                    full.append((index, reason))
                    if len(full) > window:
                        return Plan(full=full, compressed_reason=f"not used by the recent steps (W={window})")
        return Plan(full=full, compressed_reason=f"not used by the recent steps (W={window})")
