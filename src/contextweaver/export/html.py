"""A single self-contained HTML file: the graph as an arc diagram (steps top to bottom, parent edges
as arcs) and a side panel showing the clicked node's step, status, parents with their reasons,
children and raw text.

Nothing is loaded from outside: CSS and JS are inlined from `assets/`, and a Content-Security-Policy
allows no network and runs only the viewer's own script (by hash). Trace text is escaped into the
SVG with html.escape and handed to the script as JSON in which `<`, `>` and `&` are \\u-escaped,
so no output of an agent can close the data block or become markup.
"""

from __future__ import annotations

import base64
import hashlib
import html
import importlib.resources
import json
from typing import Any

from contextweaver.export.model import STATUS_COLOURS, GraphView, NodeView, graph_view
from contextweaver.records import WovenContext

ROW = 30
TOP = 16
ARC_X = 230
WIDTH = 900


def _asset(name: str) -> str:
    return (
        importlib.resources.files("contextweaver.export").joinpath("assets", name).read_text(encoding="utf-8")
    )


def json_for_script(value: Any) -> str:
    """JSON that is inert inside a <script> element (cannot contain `</script>` or `<!--`)."""
    text = json.dumps(value, ensure_ascii=False)
    for raw, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, escaped)
    return text


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _arc(view: GraphView, node: NodeView, parent_index: int, confidence: float) -> str:
    y1, y2 = TOP + parent_index * ROW + ROW / 2, TOP + node.index * ROW + ROW / 2
    bend = min(ARC_X - 20, 14 + 10 * (node.index - parent_index))
    width = 0.8 + 1.6 * max(0.0, min(1.0, confidence))
    return (
        f'<path class="arc" data-parent="{parent_index}" data-child="{node.index}" stroke-width="{width:.1f}" '
        f'd="M{ARC_X} {y1:.0f} C{ARC_X - bend} {y1:.0f} {ARC_X - bend} {y2:.0f} {ARC_X} {y2:.0f}"/>'
    )


def _row(node: NodeView) -> str:
    y = TOP + node.index * ROW
    mid = y + ROW / 2
    filled = node.mode in (None, "full", "trimmed")
    fill = node.colour if filled else "#ffffff"
    dash = ' stroke-dasharray="2 2"' if node.mode == "dropped" else ""
    meta = f"{node.status} · {node.tokens} tok" + (f" · {node.mode}" if node.mode else "")
    ring = (
        f'<circle cx="{ARC_X}" cy="{mid:.0f}" r="9" fill="none" stroke="#1f6feb" stroke-width="2"/>'
        if node.mode == "full" and node.index and node.kind != "root"
        else ""
    )
    return (
        f'<g class="row {_e(node.mode or "")}" data-index="{node.index}" tabindex="0">'
        f"<title>{_e(node.id + ': ' + node.label)}</title>"
        f'<rect class="hit" x="0" y="{y}" width="{WIDTH}" height="{ROW}"/>'
        f"{ring}"
        f'<circle cx="{ARC_X}" cy="{mid:.0f}" r="6" fill="{fill}" stroke="{node.colour}" stroke-width="2"{dash}/>'
        f'<text class="id" x="{ARC_X + 16}" y="{mid + 4:.0f}">{_e(node.id)}</text>'
        f'<text class="label" x="{ARC_X + 58}" y="{mid + 4:.0f}">{_e(node.label)}</text>'
        f'<text class="meta" x="{WIDTH - 12}" y="{mid + 4:.0f}" text-anchor="end">{_e(meta)}</text>'
        "</g>"
    )


STATUS_WORDS = {"root": "system prompt and task", "unknown": "no tests (unknown)"}
MODE_INK = "#222"
"""The mode dots' colour: none of the status colours, so a fill never reads as a status."""


def _legend(view: GraphView) -> str:
    """Two keys, as `_row` draws the dots: the colour is the step's test status; with a woven context, the
    shape is how the step is sent (ringed: in full, filled: trimmed, hollow: compressed, dashed: dropped)."""
    items = ["<span class='key'>colour = tests:</span>"] + [
        f'<span><i class="dot" style="background:{colour};border-color:{colour}"></i>'
        f"{_e(STATUS_WORDS.get(status, status))}</span>"
        for status, colour in STATUS_COLOURS.items()
        if any(n.status == status for n in view.nodes)
    ]
    if view.current is not None:
        ink, ring = f"border-color:{MODE_INK}", "box-shadow:0 0 0 2px #fff,0 0 0 4px #1f6feb;margin:0 4px"
        shapes = {
            "full": ("kept in full", f"background:{MODE_INK};{ink};{ring}"),
            "trimmed": ("trimmed", f"background:{MODE_INK};{ink}"),
            "compressed": ("compressed", f"background:#fff;{ink}"),
            "dropped": ("dropped", f"background:#fff;{ink};border-style:dashed"),
        }
        items.append(f"<span class='key'>shape = in the context before step {view.current + 1}:</span>")
        items += [
            f'<span><i class="dot" style="{style}"></i>{words}</span>'
            for mode, (words, style) in shapes.items()
            if mode in ("full", "compressed") or any(n.mode == mode for n in view.nodes)
        ]
    items.append("<span>arc = parent edge (thicker = more confident)</span>")
    return "".join(items)


def _stats(view: GraphView) -> str:
    steps = len(view.nodes) - 1
    edges = sum(1 for _ in view.edges)
    counts = {s: sum(1 for n in view.nodes if n.status == s) for s in ("passed", "failed", "superseded")}
    text = f"{steps} steps · {edges} parent edges · " + " · ".join(f"{v} {k}" for k, v in counts.items())
    if view.current is not None:
        kept = sum(1 for n in view.nodes if n.mode in ("full", "trimmed"))
        compressed = sum(1 for n in view.nodes if n.mode in ("compressed", "dropped"))
        text += f" · context before step {view.current + 1}: {kept} kept in full, {compressed} compressed"
    return text


def to_html(graph: Any, context: WovenContext | None = None, title: str = "") -> str:
    view = graph if isinstance(graph, GraphView) else graph_view(graph, context, title)
    height = TOP * 2 + ROW * len(view.nodes)
    arcs = "".join(_arc(view, node, p.index, p.confidence) for node, p in view.edges)
    rows = "".join(_row(node) for node in view.nodes)
    script = _asset("viewer.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    policy = f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-{digest}'"
    payload = {"title": view.title, "current": view.current, "nodes": [n.as_dict() for n in view.nodes]}
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{_e(policy)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(view.title)}</title>
<style>
{_asset("viewer.css")}
</style>
</head>
<body>
<header>
<h1>{_e(view.title)}</h1>
<div class="stats">{_e(_stats(view))}</div>
<div class="legend">{_legend(view)}</div>
</header>
<main>
<div id="graph"><svg role="img" aria-label="dependency graph" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}">
<g class="arcs">{arcs}</g>
{rows}
</svg></div>
<aside id="panel"><p class="hint">Click a step to see its parents, reasons and output.</p></aside>
</main>
<script type="application/json" id="cw-data">{json_for_script(payload)}</script>
<script>{script}</script>
</body>
</html>
"""
