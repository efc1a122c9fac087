"""Selectors decide, per step, which steps the context keeps in full (a Plan for weaving)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from contextweaver.protocols import Selector
from contextweaver.registry import Registry

if TYPE_CHECKING:
    from contextweaver.config import WeaverConfig
    from contextweaver.graph import DependencyGraph
    from contextweaver.selectors.plan import Plan


SELECTORS = Registry(
    "selector",
    {
        "ancestry": "contextweaver.selectors.ancestry:AncestrySelector",
        "frontier": "contextweaver.selectors.frontier:FrontierSelector",
        "recency": "contextweaver.selectors.recency:RecencySelector",
        "adaptive": "contextweaver.selectors.adaptive:AdaptiveSelector",
        "select": "contextweaver.selectors.select:SelectSelector",
    },
)


def warmup_plan(graph: DependencyGraph, window: int) -> Plan | None:
    """While the history has at most W steps it is returned unchanged (the graph is still built)."""
    from contextweaver.selectors.plan import Plan

    k = len(graph) - 1
    if k > window:
        return None
    reason = f"warmup: the history has at most W={window} steps"
    return Plan(full=[(i, reason) for i in range(k, 0, -1)], compressed_reason=reason)


def build_selector(config: WeaverConfig) -> Selector:
    """A selector with settings of its own (`select`) reads them from the config (`from_config`)."""
    cls = SELECTORS.get(config.selector)
    from_config = getattr(cls, "from_config", None)
    selector: Selector = from_config(config) if from_config is not None else cls()
    return selector
