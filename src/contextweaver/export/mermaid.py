"""Mermaid flowchart of the dependency graph, for Markdown renderers (GitHub, docs sites).

Mermaid has no reliable quoting for arbitrary text: quotes, brackets, `-->`, `%%`, `#`, `;`,
backticks and HTML all change its meaning. Every character outside a small safe set is written
as a numeric entity (`#60;` for `<`), which Mermaid decodes for display only.
"""

from __future__ import annotations

import re
from typing import Any

from contextweaver.export.model import GraphView, graph_view, short
from contextweaver.records import WovenContext

SAFE = re.compile(r"[A-Za-z0-9 ,.:_/+=?!@$*'-]")


def entity(text: str) -> str:
    """`text` with every unsafe character as a Mermaid entity code; one line."""
    text = " ".join(text.split())
    return "".join(ch if SAFE.fullmatch(ch) else f"#{ord(ch)};" for ch in text).replace("--", "-#45;")


def to_mermaid(graph: Any, context: WovenContext | None = None, title: str = "") -> str:
    view = graph if isinstance(graph, GraphView) else graph_view(graph, context, title)
    lines = ["---", f"title: {entity(view.title)}", "---", "flowchart TD"]
    for node in view.nodes:
        label = entity(f"{node.id} [{node.status}] {node.label}")
        lines.append(f'  {node.id}["{label}"]')
    for node, parent in view.edges:
        lines.append(
            f'  N{parent.index} -->|"{entity(f"{parent.confidence:.2f} {short(parent.reason, 40)}")}"| {node.id}'
        )
    for status in ("root", "passed", "failed", "superseded", "unknown"):
        members = [n.id for n in view.nodes if n.status == status]
        if members:
            colour = next(n.colour for n in view.nodes if n.status == status)
            lines.append(f"  classDef {status} stroke:{colour},stroke-width:2px,color:#1d2733")
            lines.append(f"  class {','.join(members)} {status}")
    kept = [n.id for n in view.nodes if n.mode in ("full", "trimmed")]
    compressed = [n.id for n in view.nodes if n.mode in ("compressed", "dropped")]
    if kept:
        lines += ["  classDef kept fill:#e8f1fb", f"  class {','.join(kept)} kept"]
    if compressed:
        lines += [
            "  classDef compressed fill:#ffffff,stroke-dasharray:4 3",
            f"  class {','.join(compressed)} compressed",
        ]
    return "\n".join(lines) + "\n"
