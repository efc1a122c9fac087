"""Builders for small, realistic steps used across the core tests."""

from __future__ import annotations

from collections.abc import Sequence

from contextweaver.records import Annotation, Node, Parent, Step

ROOT = [
    {"role": "system", "content": "You are a coding agent. Use one bash command per turn."},
    {"role": "user", "content": "Fix the off-by-one error in pager.paginate so the last page is returned."},
]


def step(i: int, lines: int = 3) -> Step:
    """Step i: a command and an output of `lines` lines that mention the step's own marker."""
    output = "\n".join(f"step{i}_line{j} value_{i}_{j}" for j in range(lines))
    return Step(thought=f"Looking at part {i}.", action=f"cat src/part_{i}.py", observation=output)


class FixedParents:
    """An annotator that attaches parents given in advance (for graph-shape tests, not an LLM)."""

    def __init__(self, edges: dict[int, Sequence[int]]) -> None:
        self.edges = edges

    def annotate(self, node: Node, candidates, graph, task: str, m: int) -> Annotation:  # noqa: ANN001
        parents = [Parent(p, 1.0, "planted") for p in self.edges.get(node.index, [node.index - 1])]
        return Annotation("", parents, "")
