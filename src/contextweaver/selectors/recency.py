"""Pure recency inside ContextWeaver: the current step and the W steps before it, graph ignored.

The control arm for the adaptive selector: same slot count as ancestry (W + the current step), same
TEST STATUS line and budget handling, so any difference comes from which steps are chosen.
"""

from __future__ import annotations

from contextweaver.config import WeaverConfig
from contextweaver.nodes.graph import DependencyGraph
from contextweaver.weaving.plan import Plan


class RecencySelector:
    name = "recency"

    def plan(self, graph: DependencyGraph, config: WeaverConfig) -> Plan:
        k = len(graph) - 1
        window = config.window
        full = [(k, "current step")]
        full += [
            (i, f"one of the {window} steps before step {k}")
            for i in range(k - 1, max(0, k - 1 - window), -1)
        ]
        return Plan(full=full, compressed_reason=f"older than the {window} steps before step {k}")
