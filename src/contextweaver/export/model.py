"""A plain, export-ready view of the graph: one record per node with its label, status and reasons.

The three exporters read this view rather than the graph, so labels, colours and what counts as
"kept" are decided once. It depends only on the attributes a Node exposes (index, step, parents,
validation_status, superseded_by, summary, full_tokens) and on WovenContext decisions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from contextweaver.records import Decision, Node, WovenContext

LABEL_CHARS = 48
TEXT_LIMIT = 20_000
"""Characters of thought/action/observation embedded per node: head and tail of giant outputs."""

STATUS_COLOURS = {
    "root": "#6a3d9a",
    "passed": "#2e7d32",
    "failed": "#c62828",
    "superseded": "#8d8d8d",
    "unknown": "#44617b",
}
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass(frozen=True)
class ParentView:
    index: int
    confidence: float
    reason: str


@dataclass
class NodeView:
    index: int
    label: str
    kind: str
    status: str
    superseded_by: int | None
    tokens: int
    summary: str
    thought: str
    action: str
    observation: str
    parents: list[ParentView]
    children: list[int] = field(default_factory=list)
    mode: str | None = None
    mode_reason: str = ""

    @property
    def id(self) -> str:
        return f"N{self.index}"

    @property
    def colour(self) -> str:
        return STATUS_COLOURS.get(self.status, STATUS_COLOURS["unknown"])

    def as_dict(self) -> dict[str, Any]:
        data = {k: v for k, v in self.__dict__.items() if k != "parents"}
        data["parents"] = [p.__dict__ for p in self.parents]
        data["id"], data["colour"] = self.id, self.colour
        return data


@dataclass
class GraphView:
    nodes: list[NodeView]
    title: str = "ContextWeaver dependency graph"
    current: int | None = None
    """The step whose woven context colours the nodes (the last step), if a context was given."""

    @property
    def edges(self) -> Iterable[tuple[NodeView, ParentView]]:
        for node in self.nodes:
            for parent in node.parents:
                yield node, parent


def clean(text: str) -> str:
    """Drop control characters (ANSI escapes, NULs) that no output syntax can carry."""
    return CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def clip(text: str, limit: int = TEXT_LIMIT) -> str:
    text = clean(text)
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n... [{len(text) - limit} characters omitted] ...\n{text[-half:]}"


def short(text: str, limit: int = LABEL_CHARS) -> str:
    line = " ".join(clean(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _label(node: Node) -> str:
    step = node.step
    if node.index == 0:
        return "task"
    if step.kind == "user":
        return "user: " + short(step.observation, LABEL_CHARS - 6)
    first_action_line = next((line for line in step.action.splitlines() if line.strip()), "")
    return short(first_action_line or step.thought or "(no action)")


def graph_view(graph: Any, context: WovenContext | None = None, title: str = "") -> GraphView:
    """The export view of a DependencyGraph (anything with `.nodes`), coloured by `context` if given."""
    decisions: dict[int, Decision] = {d.index: d for d in context.decisions} if context else {}
    nodes = list(graph.nodes)
    current = nodes[-1].index if context is not None and nodes else None
    views = []
    for node in nodes:
        status = (
            "root"
            if node.index == 0
            else str(getattr(node.validation_status, "value", node.validation_status))
        )
        decision = decisions.get(node.index)
        mode, reason = (decision.mode, decision.reason) if decision else (None, "")
        if context is not None and node.index in (0, current) and decision is None:
            mode, reason = "full", "root: system prompt and task" if node.index == 0 else "current step"
        step = node.step
        views.append(
            NodeView(
                index=node.index,
                label=_label(node),
                kind="root" if node.index == 0 else step.kind,
                status=status,
                superseded_by=node.superseded_by,
                tokens=int(node.full_tokens or 0),
                summary=clip(node.summary or "", 2000),
                thought=clip(step.thought),
                action=clip(step.action),
                observation=clip(step.observation),
                parents=[ParentView(p.index, float(p.confidence), clean(p.reason)) for p in node.parents],
                mode=mode,
                mode_reason=clean(reason),
            )
        )
    for view in views:
        for parent in view.parents:
            if 0 <= parent.index < len(views):
                views[parent.index].children.append(view.index)
    return GraphView(views, title=clean(title) or GraphView.title, current=current)
