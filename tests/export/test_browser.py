"""The HTML viewer in a real headless Chromium: it renders, selects nodes, and runs no trace text."""

from __future__ import annotations

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


def test_fragment_selects_node_and_lists_parents_with_reasons(chromium, graph, context, tmp_path):
    page = tmp_path / "graph.html"
    page.write_text(to_html(graph, context), encoding="utf-8")
    panel = dump(chromium, page, "#node=4").split('id="panel"', 1)[1]
    assert "N4 · step 4" in panel and "passed" in panel
    assert "re-runs the failing test" in panel and "0.80" in panel
    assert "current step" in panel
    default = dump(chromium, page).split('id="panel"', 1)[1]
    assert "N4 · step 4" in default  # no fragment: the current (last) step


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
