"""Pictures of the dependency graph: DOT (Graphviz), Mermaid, and a self-contained HTML viewer.

Each exporter takes a DependencyGraph (and optionally the WovenContext of the last step, to show
which steps were kept in full or compressed) and returns a string. Trace text is untrusted agent
output: every exporter escapes it for its own syntax, and the HTML loads nothing from outside.
"""

from __future__ import annotations

from contextweaver.export.dot import to_dot
from contextweaver.export.html import to_html
from contextweaver.export.mermaid import to_mermaid
from contextweaver.export.model import GraphView, NodeView, graph_view

__all__ = ["GraphView", "NodeView", "graph_view", "to_dot", "to_html", "to_mermaid"]
