"""Graphviz DOT: one node per step (colour = validation status, fill = kept in full), parent edges
labelled with their confidence and carrying the reason as a tooltip.

DOT quoted strings only need `"` and `\\` escaped; newlines become `\\n` (a centred line break)
and control characters are dropped, so untrusted trace text cannot end the string or the graph.
"""

from __future__ import annotations

from typing import Any

from contextweaver.export.model import GraphView, graph_view, short
from contextweaver.records import WovenContext


def quote(text: str) -> str:
    """A DOT double-quoted string holding `text` literally."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def to_dot(graph: Any, context: WovenContext | None = None, title: str = "") -> str:
    view = graph if isinstance(graph, GraphView) else graph_view(graph, context, title)
    lines = [
        "digraph contextweaver {",
        f"  label={quote(view.title)}; labelloc=t; fontname=Helvetica; rankdir=TB;",
        '  node [shape=box, style="rounded,filled", fontname=Helvetica, fontsize=10, fillcolor=white];',
        '  edge [fontname=Helvetica, fontsize=8, color="#5f6b7a"];',
    ]
    for node in view.nodes:
        fill = {"full": "#e8f1fb", "trimmed": "#fff6dc", "compressed": "white", "dropped": "#f2f2f2"}.get(
            node.mode or "", "white"
        )
        style = "rounded,filled,dashed" if node.mode in ("compressed", "dropped") else "rounded,filled"
        label = f"{node.id} [{node.status}]\n{node.label}"
        tooltip = node.summary or node.label
        if node.mode:
            tooltip += f"\n{node.mode}: {node.mode_reason}"
        lines.append(
            f"  {node.id} [label={quote(label)}, color={quote(node.colour)}, fillcolor={quote(fill)}, "
            f"style={quote(style)}, penwidth={2 if node.index == view.current else 1}, tooltip={quote(tooltip)}];"
        )
    for node, parent in view.edges:
        width = 0.6 + 2.4 * max(0.0, min(1.0, parent.confidence))
        lines.append(
            f"  N{parent.index} -> {node.id} [label={quote(f'{parent.confidence:.2f}')}, "
            f"penwidth={width:.1f}, tooltip={quote(short(parent.reason, 300))}];"
        )
    lines.append("}")
    return "\n".join(lines) + "\n"
