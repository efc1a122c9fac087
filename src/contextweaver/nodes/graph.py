"""The dependency graph: append-only nodes, parent edges (a DAG, at most m parents), label records."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import overload

from contextweaver.records import Node, Parent, ValidationStatus

EXCLUDED = (ValidationStatus.FAILED, ValidationStatus.SUPERSEDED)


@dataclass(frozen=True)
class LabelRecord:
    """A label given to a node after the fact (validation, supersession): appended, never edited."""

    index: int
    status: ValidationStatus
    by: int
    reason: str


class DependencyGraph:
    """Nodes in step order (index 0 is the root: system + task) and the edges to their parents."""

    def __init__(self, max_parents: int = 3) -> None:
        self.max_parents = max_parents
        self.nodes: list[Node] = []
        self.labels: list[LabelRecord] = []
        self._excluded: set[int] = set()  # failed or superseded: never candidates again

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes)

    def node(self, index: int) -> Node:
        return self.nodes[index]

    @property
    def last(self) -> Node:
        return self.nodes[-1]

    def add(self, node: Node) -> None:
        if node.index != len(self.nodes):
            raise ValueError(f"node index {node.index} out of order: the graph holds {len(self.nodes)} nodes")
        self.nodes.append(node)
        if node.validation_status in EXCLUDED:
            self._excluded.add(node.index)

    def set_parents(self, index: int, parents: list[Parent]) -> None:
        """Attach parents to a new node; edges point only backwards, so the graph stays a DAG."""
        node = self.nodes[index]
        if node.parents:
            raise ValueError(f"node {index} already has parents (the graph is append-only)")
        unique: dict[int, Parent] = {}
        for parent in parents:
            if not 0 <= parent.index < index:
                raise ValueError(f"parent {parent.index} of node {index} is not an earlier node")
            unique.setdefault(parent.index, parent)
        node.parents = tuple(list(unique.values())[: self.max_parents])

    def label(self, index: int, status: ValidationStatus, by: int, reason: str) -> None:
        """Record a new label for node `index` (the node's raw text is never touched)."""
        node = self.nodes[index]
        self.labels.append(LabelRecord(index, status, by, reason))
        node.validation_status = status
        if status == ValidationStatus.SUPERSEDED:
            node.superseded_by = by
        if status in EXCLUDED:
            self._excluded.add(index)

    def ancestry(self, index: int, limit: int) -> list[int]:
        """Ancestors of `index` breadth-first along parent edges, at most `limit`, nearest first."""
        return list(self.ancestry_via(index, limit))

    def ancestry_via(self, index: int, limit: int) -> dict[int, int]:
        """Each ancestor (BFS order, at most `limit`) mapped to the child through which it was reached.

        The root (index 0) is always in the context verbatim, so it is walked through but not counted.
        """
        seen = {index}
        reached: dict[int, int] = {}
        queue = deque([index])
        while queue and len(reached) < limit:
            child = queue.popleft()
            for parent in self.nodes[child].parents:
                if parent.index in seen:
                    continue
                seen.add(parent.index)
                queue.append(parent.index)
                if parent.index != 0:
                    reached[parent.index] = child
                    if len(reached) == limit:
                        break
        return reached

    def is_candidate(self, index: int, before: int) -> bool:
        return 0 <= index < before and index not in self._excluded

    def candidates(self, index: int) -> CandidateView:
        """Earlier nodes a new node may depend on: all but failed and superseded ones (SPEC 2.3).

        A lazy view: membership is O(1), so analyzers that look up only some nodes stay flat in cost.
        """
        return CandidateView(self, index)


class CandidateView(Sequence[Node]):
    """The candidates for a node at `before`, materialized only when iterated."""

    def __init__(self, graph: DependencyGraph, before: int) -> None:
        self._graph = graph
        self._before = before

    def __contains__(self, item: object) -> bool:
        index = item.index if isinstance(item, Node) else item
        return isinstance(index, int) and self._graph.is_candidate(index, self._before)

    def allows(self, index: int) -> bool:
        """`index in self` for an int: the analyzer asks it for every piece of evidence."""
        return 0 <= index < self._before and index not in self._graph._excluded

    def __iter__(self) -> Iterator[Node]:
        excluded = self._graph._excluded
        return (self._graph.nodes[i] for i in range(self._before) if i not in excluded)

    def __len__(self) -> int:
        return self._before - sum(1 for i in self._graph._excluded if i < self._before)

    @overload
    def __getitem__(self, i: int) -> Node: ...
    @overload
    def __getitem__(self, i: slice) -> list[Node]: ...
    def __getitem__(self, i: int | slice) -> Node | list[Node]:
        return list(self)[i]
