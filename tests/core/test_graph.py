from __future__ import annotations

import pytest

from contextweaver.nodes.extract import make_node, root_node
from contextweaver.nodes.graph import DependencyGraph
from contextweaver.records import Parent, ValidationStatus
from tests.core.helpers import ROOT, step


def build(n: int, edges: dict[int, list[int]], max_parents: int = 3) -> DependencyGraph:
    graph = DependencyGraph(max_parents)
    graph.add(root_node(ROOT))
    for i in range(1, n + 1):
        graph.add(make_node(i, step(i)))
        graph.set_parents(i, [Parent(p, 1.0, "planted") for p in edges.get(i, [i - 1])])
    return graph


def test_worked_example_ancestry_is_bfs_capped_at_w() -> None:
    graph = build(18, {18: [12, 16], 16: [14], 14: [8], 12: [8], 8: [6]})
    assert graph.ancestry(18, 5) == [12, 16, 8, 14, 6]
    assert graph.ancestry(18, 3) == [12, 16, 8]


def test_root_is_walked_through_but_not_counted() -> None:
    graph = build(4, {1: [0], 2: [1], 3: [0], 4: [3, 2]})
    assert graph.ancestry(4, 5) == [3, 2, 1]


def test_parents_must_be_earlier_and_are_capped_at_m() -> None:
    graph = build(5, {}, max_parents=2)
    graph.add(make_node(6, step(6)))
    with pytest.raises(ValueError, match="not an earlier node"):
        graph.set_parents(6, [Parent(6, 1.0, "self")])
    graph.set_parents(6, [Parent(i, 1.0, "x") for i in (5, 4, 3)])
    assert graph.node(6).parent_ids == (5, 4)
    with pytest.raises(ValueError, match="append-only"):
        graph.set_parents(6, [Parent(1, 1.0, "again")])


def test_failed_and_superseded_nodes_are_not_candidates() -> None:
    graph = build(5, {})
    graph.label(2, ValidationStatus.FAILED, 2, "pytest: 1 failed")
    graph.label(3, ValidationStatus.SUPERSEDED, 5, "test_x passes at 5")
    candidates = graph.candidates(6)
    assert [n.index for n in candidates] == [0, 1, 4, 5]
    assert 2 not in candidates and 4 in candidates and 6 not in candidates
    assert len(candidates) == 4
    assert graph.node(3).superseded_by == 5
    assert [r.index for r in graph.labels] == [2, 3]  # labels are appended records


def test_nodes_must_arrive_in_order() -> None:
    graph = DependencyGraph()
    graph.add(root_node(ROOT))
    with pytest.raises(ValueError, match="out of order"):
        graph.add(make_node(3, step(3)))
