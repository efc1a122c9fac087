"""Rebuilding nodes from rows that lack what extraction computed, and checking they match the store.

Such rows come from stores written before the computed fields were kept, or from a step whose
annotation never reached the disk. They go through the weaver again with an annotator that returns
the stored annotation, so no analyzer runs for a step that was already annotated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from contextweaver.nodes.graph import DependencyGraph
from contextweaver.protocols import Annotator
from contextweaver.records import Annotation, Node, ValidationStatus
from contextweaver.store.base import StoredAnnotation

NodeSignature = tuple[int, tuple[tuple[int, float, str], ...], str, int | None, str, str]
"""(index, parents as (index, confidence, reason), status, superseded_by, summary, dependency summary)."""


class StoredAnnotator:
    """Returns stored annotations for already-stored steps; asks the real annotator for the rest."""

    def __init__(self, stored: dict[int, StoredAnnotation], inner: Annotator) -> None:
        self.stored = stored
        self.inner = inner

    def annotate(
        self, node: Node, candidates: Sequence[Node], graph: DependencyGraph, task: str, m: int
    ) -> Annotation:
        found = self.stored.get(node.index)
        if found is None:
            return self.inner.annotate(node, candidates, graph, task, m)
        node.summary = found.summary
        return Annotation(found.summary, list(found.parents), found.dependency_summary)


def signature(graph: DependencyGraph, index: int | None = None) -> list[NodeSignature]:
    """What "the same graph" means: parents, statuses, supersessions and summaries of every step
    (or of step `index` alone)."""
    nodes = graph.nodes[1:] if index is None else [graph.node(index)]
    return [
        (
            node.index,
            tuple((p.index, round(p.confidence, 6), p.reason) for p in node.parents),
            str(node.validation_status),
            node.superseded_by,
            node.summary,
            node.dependency_summary,
        )
        for node in nodes
    ]


def stored_signature(stored: Sequence[Any]) -> list[NodeSignature]:
    """The same signature read from stored rows: initial statuses with the later labels applied."""
    status: dict[int, str] = {}
    superseded: dict[int, int | None] = {}
    for item in stored:
        if item.annotation is not None:
            status[item.index] = item.annotation.validation_status
            superseded.setdefault(item.index, None)
            for label in item.annotation.labels:
                status[label.index] = str(label.status)
                if label.status == ValidationStatus.SUPERSEDED:
                    superseded[label.index] = label.by
    return [
        (
            item.index,
            tuple((p.index, round(p.confidence, 6), p.reason) for p in item.annotation.parents),
            status[item.index],
            superseded[item.index],
            item.annotation.summary,
            item.annotation.dependency_summary,
        )
        for item in stored
        if item.annotation is not None
    ]


def differences(rebuilt: list[NodeSignature], stored: list[NodeSignature]) -> list[str]:
    """Where a rebuilt graph departs from the stored rows (e.g. a newer test parser relabels a step)."""
    by_index = {s[0]: s for s in stored}
    fields = ("parents", "status", "superseded_by", "summary", "dependency_summary")
    out = []
    for node in rebuilt:
        old = by_index.get(node[0])
        if old is None:
            continue
        changed = [name for name, a, b in zip(fields, node[1:], old[1:], strict=True) if a != b]
        if changed:
            out.append(f"step {node[0]}: rebuilt {', '.join(changed)} differ from the stored ones")
    return out
