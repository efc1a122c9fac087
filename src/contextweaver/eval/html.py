"""A self-contained HTML report: inline CSS, images as base64 data URIs, every text escaped.

No scripts and no external links, so it opens anywhere offline and trajectory-derived names
(instance ids, strategy names) can never inject markup.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from typing import Any

from contextweaver.eval.figures import number as fmt
from contextweaver.eval.report_data import Report, meta_text

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1400px}
table{border-collapse:collapse;margin:1em 0;font-size:13px}
.scroll{overflow-x:auto}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:right}
th{background:#f1f1f1}td.l,th.l{text-align:left}
tr.sep td{border-top:2px solid #666}
.ok{color:#116611}.no{color:#aa1111}.na{color:#666}
img{max-width:100%;border:1px solid #ddd;margin:.5em 0}
code{background:#f4f4f4;padding:1px 4px}
"""


def esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _table(
    headers: Sequence[str], body: Sequence[Sequence[str]], left: int = 1, breaks: Sequence[int] = ()
) -> str:
    head = "".join(f'<th class="{"l" if i < left else ""}">{esc(h)}</th>' for i, h in enumerate(headers))
    lines = []
    for n, cells in enumerate(body):
        tds = "".join(f'<td class="{"l" if i < left else ""}">{esc(c)}</td>' for i, c in enumerate(cells))
        lines.append(f'<tr class="{"sep" if n in breaks else ""}">{tds}</tr>')
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(lines)}</tbody></table>"
    return f"<div class='scroll'>{table}</div>"  # a wide table scrolls, the page does not


def render_html(
    report: Report, columns: Sequence[tuple[str, str, str]], verdicts: Sequence[tuple[str, bool | None]]
) -> str:
    body = [[fmt(row.as_dict()[key], pattern) for key, _, pattern in columns] for row in report.rows]
    breaks = [i for i in range(1, len(report.rows)) if report.rows[i].budget != report.rows[i - 1].budget]
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>ContextWeaver evaluation</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>ContextWeaver evaluation</h1>",
    ]
    if report.meta:
        items = "".join(
            f"<li><b>{esc(k.replace('_', ' '))}</b>: {esc(meta_text(k, v))}</li>"
            for k, v in report.meta.items()
        )
        parts.append(f"<ul>{items}</ul>")
    parts.append("<h2>All strategies, all budgets</h2>")
    parts.append(_table([h for _, h, _ in columns], body, left=2, breaks=breaks))
    if report.failures:
        parts.append(f"<h2 class='no'>Failed runs ({len(report.failures)}), not in the numbers above</h2>")
        failure_rows = [[f["strategy"], f["trajectory"], str(f["seed"]), f["error"]] for f in report.failures]
        parts.append(_table(["strategy", "trajectory", "seed", "error"], failure_rows, left=4))
    parts.append("<h2>Verdicts</h2><ul>")
    for line, holds in verdicts:
        kind = "na" if holds is None else "ok" if holds else "no"
        parts.append(f'<li class="{kind}">{esc(line)}</li>')
    parts.append("</ul>")
    if report.arms:
        parts.append("<h2>Adaptive against its arms, per repository group (pooled recall)</h2>")
        arm_rows = [
            [
                a.budget,
                a.group,
                str(a.trajectories),
                fmt(a.ancestry, "{:.3f}"),
                fmt(a.recency, "{:.3f}"),
                fmt(a.adaptive, "{:.3f}"),
                "yes" if a.holds else "NO",
            ]
            for a in report.arms
        ]
        parts.append(
            _table(
                ["budget", "group", "trajectories", "ancestry", "recency", "adaptive", ">= better arm"],
                arm_rows,
                left=2,
            )
        )
    parts.append("<h2>Figures</h2>")
    for name, png in report.images.items():
        data = base64.b64encode(png).decode("ascii")
        parts.append(f"<h3>{esc(name)}</h3><img alt='{esc(name)}' src='data:image/png;base64,{data}'>")
    if report.groups:
        parts.append("<h2>Per repository group</h2>")
        group_rows = [
            [
                g.budget,
                g.group,
                g.strategy,
                str(g.trajectories),
                fmt(g.tokens_mean, "{:,.0f}"),
                fmt(g.recall_pooled, "{:.3f}"),
                fmt(g.recall_mean, "{:.3f}"),
            ]
            for g in sorted(report.groups, key=lambda g: (g.budget, g.group, g.strategy))
        ]
        parts.append(
            _table(
                ["budget", "group", "strategy", "trajectories", "tokens", "recall", "recall (mean)"],
                group_rows,
                left=3,
            )
        )
    parts.append("</body></html>")
    return "\n".join(parts)
