"""Adaptive selector: recency for chain-like few-file phases, ancestry for branching work; cheap per step."""

from __future__ import annotations

import pytest

from contextweaver.config import WeaverConfig
from contextweaver.nodes.extract import make_node, root_node
from contextweaver.nodes.graph import DependencyGraph
from contextweaver.records import Parent, Step
from contextweaver.selectors import SELECTORS
from contextweaver.selectors.adaptive import AdaptiveSelector, recent_shape
from contextweaver.weaver import ContextWeaver


class CountingGraph(DependencyGraph):
    def __init__(self) -> None:
        super().__init__(3)
        self.touched: set[int] = set()

    def node(self, index: int):  # type: ignore[no-untyped-def]
        self.touched.add(index)
        return super().node(index)


def build(parents: dict[int, list[int]], n: int, files: dict[int, str] | None = None) -> CountingGraph:
    graph = CountingGraph()
    graph.add(root_node([{"role": "user", "content": "task"}]))
    for k in range(1, n + 1):
        path = (files or {}).get(k, "a.py")
        graph.add(make_node(k, Step(f"step {k}", f"cat {path}", f"out {k}")))
        graph.set_parents(k, [Parent(p, 0.9, "test") for p in parents.get(k, [k - 1])])
    graph.touched.clear()
    return graph


def test_registered_and_used_by_the_weaver() -> None:
    assert SELECTORS.get("adaptive") is AdaptiveSelector
    weaver = ContextWeaver(WeaverConfig(selector="adaptive"))
    assert isinstance(weaver.selector, AdaptiveSelector)


@pytest.mark.slow
def test_chain_of_one_file_is_a_linear_loop_served_by_recency() -> None:
    graph = build({}, 20)  # every step depends on the one before it, one file
    shape = recent_shape(graph, 3)
    assert (shape.chained, shape.looked, shape.files) == (3, 3, 1)
    plan = AdaptiveSelector().plan(graph, WeaverConfig(window=5))
    kept = [i for i, _ in plan.full]
    assert kept[:4] == [20, 19, 18, 17]
    assert "linear loop" in plan.notes[0]


def test_branching_multi_file_work_is_served_by_ancestry() -> None:
    parents = {k: [2] for k in range(3, 21)}  # every step hangs off step 2 (exploration branches)
    parents[20] = [12, 7]
    parents[12] = [4]
    files = {k: f"pkg/mod_{k}.py" for k in range(1, 21)}
    graph = build(parents, 20, files)
    plan = AdaptiveSelector().plan(graph, WeaverConfig(window=5))
    kept = [i for i, _ in plan.full]
    assert kept[0] == 20 and kept[1] == 19  # one recent slot
    assert {12, 7, 4}.issubset(kept[2:]) and len(kept) == 6
    assert "structural" in plan.notes[0]
    reasons = dict(plan.full)
    assert reasons[4] == "ancestor of step 20 via step 12"


def test_signals_read_only_the_last_few_nodes() -> None:
    graph = build({}, 200)
    AdaptiveSelector().plan(graph, WeaverConfig(window=5))
    assert min(graph.touched) >= 190  # no scan of the history
