"""The HTML viewer in a real headless Chromium: it renders, selects nodes, and runs no trace text."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

import pytest

from contextweaver.export import to_html

pytestmark = pytest.mark.browser


def dump(chromium, page: Path, fragment: str = "") -> str:
    result = chromium("--virtual-time-budget=3000", "--dump-dom", page.as_uri() + fragment)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_hostile_trace_does_not_execute_or_break_the_page(chromium, graph, context, tmp_path):
    page = tmp_path / "graph.html"
    page.write_text(to_html(graph, context, title="hostile"), encoding="utf-8")
    dom = dump(chromium, page, "#node=1")
    assert 'data-ready="1"' in dom  # the viewer script ran to the end
    assert re.search(r"<title>hostile</title>", dom)  # no payload rewrote the title
    assert "PWNED" not in dom.split("<body", 1)[0]
    assert len(re.findall(r"<script\b", dom)) == 2 and "<img" not in dom
    panel = dom[dom.index('id="panel"') :]
    assert "N1 · step 1" in panel
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in panel  # shown as text in the panel
    assert '"--&gt; ]]&gt;' in panel
    assert re.search(
        r'class="row compressed selected"[^>]*data-index="1"|data-index="1"[^>]*class="[^"]*selected', dom
    )


@pytest.mark.slow
def test_fragment_selects_node_and_lists_parents_with_reasons(chromium, graph, context, tmp_path):
    page = tmp_path / "graph.html"
    page.write_text(to_html(graph, context), encoding="utf-8")
    panel = dump(chromium, page, "#node=4").split('id="panel"', 1)[1]
    assert "N4 · step 4" in panel and "passed" in panel
    assert "re-runs the failing test" in panel and "0.80" in panel
    assert "current step" in panel
    default = dump(chromium, page).split('id="panel"', 1)[1]
    assert "N4 · step 4" in default  # no fragment: the current (last) step


@pytest.mark.slow
def test_screenshot_renders(chromium, tmp_path):
    from contextweaver.examples import example_path
    from contextweaver.formats import load_trajectory
    from contextweaver.weaver import ContextWeaver

    trajectory = load_trajectory(example_path())
    weaver = ContextWeaver(config=None)
    weaver.begin(trajectory.root)
    for step in trajectory.steps:
        weaver.add_step(step)
    page = tmp_path / "bugfix.html"
    page.write_text(to_html(weaver.graph, weaver.context(), title="bugfix"), encoding="utf-8")
    shot = tmp_path / "shot.png"
    result = chromium("--window-size=1400,900", f"--screenshot={shot}", page.as_uri() + "#node=17")
    assert result.returncode == 0 and shot.stat().st_size > 20_000
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


MEASURE = """
document.addEventListener("DOMContentLoaded", function () {
  var pane = document.getElementById("graph").getBoundingClientRect();
  var right = pane.left + document.getElementById("graph").clientWidth;
  var clipped = [];
  document.querySelectorAll("g.row").forEach(function (row) {
    var meta = row.querySelector("text.meta").getBoundingClientRect();
    var label = row.querySelector("text.label").getBoundingClientRect();
    if (meta.right > right + 0.5 || label.right > meta.left) clipped.push(row.getAttribute("data-index"));
  });
  var panel = document.getElementById("panel");  // the selected step's details, filled by then
  if (panel.scrollWidth > panel.clientWidth + 1) clipped.push("panel");
  document.body.setAttribute("data-clipped", clipped.join(",") || "none");
});
"""


@pytest.mark.parametrize("width", [1024, 1280, 1920])
def test_the_right_column_is_whole_at_common_widths(chromium, tmp_path, width):
    """Each row's status, tokens and mode (the right column) fit the graph pane and clear the label, and
    the panel needs no sideways scroll: at 1280 px the 470 px panel once left the 900 px graph 810 and cut
    'root' to 'roo'."""
    from contextweaver.examples import example_path
    from contextweaver.formats import load_trajectory
    from contextweaver.weaver import ContextWeaver

    trajectory = load_trajectory(example_path())
    weaver = ContextWeaver(config=None)
    weaver.begin(trajectory.root)
    for step in trajectory.steps:
        weaver.add_step(step)
    page = to_html(weaver.graph, weaver.context(max_tokens=3000), title="bugfix")
    digest = base64.b64encode(hashlib.sha256(MEASURE.encode("utf-8")).digest()).decode("ascii")
    page = page.replace(
        "script-src ", f"script-src 'sha256-{digest}' ", 1
    )  # this copy only: the probe may run
    page = page.replace("</head>", f"<script>{MEASURE}</script></head>", 1)
    path = tmp_path / "bugfix.html"
    path.write_text(page, encoding="utf-8")
    dom = chromium(
        f"--window-size={width},900", "--virtual-time-budget=3000", "--dump-dom", path.as_uri()
    ).stdout
    assert 'data-clipped="none"' in dom, re.search(r'data-clipped="[^"]*"', dom)
