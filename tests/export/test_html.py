from __future__ import annotations

import base64
import hashlib
import json
import re
from html.parser import HTMLParser

from contextweaver.export import to_html


class Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data


def parse(page: str) -> Collector:
    collector = Collector()
    collector.feed(page)
    return collector


def test_nothing_is_loaded_from_outside(graph, context):
    page = to_html(graph, context)
    tags = parse(page).tags
    assert not [t for t, _ in tags if t in ("link", "iframe", "object", "embed", "img", "base")]
    for tag, attrs in tags:
        for name in ("src", "href", "action", "xlink:href"):
            assert name not in attrs, (tag, attrs)
    style = page[page.index("<style>") : page.index("</style>")]
    assert "url(" not in style and "@import" not in style


def test_only_the_viewer_script_may_run(graph, context):
    page = to_html(graph, context)
    collector = parse(page)
    scripts = [attrs for tag, attrs in collector.tags if tag == "script"]
    assert scripts == [{"type": "application/json", "id": "cw-data"}, {}]
    policy = next(
        a["content"]
        for t, a in collector.tags
        if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"
    )
    assert "default-src 'none'" in policy
    digest = base64.b64encode(hashlib.sha256(collector.scripts[1].encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in policy  # the CSP hash matches the inlined script


def test_trace_text_reaches_the_data_exactly_and_inertly(graph, context, hostile):
    page = to_html(graph, context)
    block = page[page.index('id="cw-data">') + len('id="cw-data">') : page.index("</script>")]
    assert "<" not in block and ">" not in block and "&" not in block
    data = json.loads(block)
    node = data["nodes"][1]
    assert node["observation"] == hostile.replace("\x1b", "")
    assert node["action"] == "ls " + hostile.replace("\x1b", "")
    assert data["nodes"][2]["parents"][0]["reason"] == hostile.replace("\x1b", "")
    assert [n["mode"] for n in data["nodes"]] == ["full", "compressed", "full", "full", "full"]


def test_svg_text_is_escaped(graph, context):
    page = to_html(graph, context)
    svg = page[page.index("<svg") : page.index("</svg>")]
    assert "<script" not in svg and "<img" not in svg
    assert "&lt;script&gt;" in svg
    assert len(re.findall(r'<g class="row[^"]*" data-index="\d+"', svg)) == 5
    assert len(re.findall(r'<path class="arc"', svg)) == 6


def test_the_legend_gives_each_meaning_its_own_dot(tmp_path):
    """Status is the colour, the context's treatment the shape: no two legend entries draw alike (a
    step without tests and a step kept in full once shared one dot)."""
    from pathlib import Path

    from click.testing import CliRunner

    from contextweaver.cli import main
    from contextweaver.examples import __file__ as examples

    run = Path(examples).parent / "bugfix.jsonl"
    result = CliRunner().invoke(
        main, ["graph", str(run), "--out", str(tmp_path), "--format", "html", "--budget", "3000"]
    )
    assert result.exit_code == 0, result.output
    page = (tmp_path / "bugfix.html").read_text(encoding="utf-8")
    legend = page[page.index('<div class="legend">') :].split("</div>", 1)[0]
    entries = re.findall(r'<i class="dot" style="([^"]+)"></i>([^<]+)</span>', legend)
    labels = [label for _, label in entries]
    assert {"no tests (unknown)", "passed", "kept in full", "compressed", "dropped"} <= set(labels), labels
    styles = [style for style, _ in entries]
    assert len(set(styles)) == len(styles), entries
    assert "colour = tests:" in legend and "shape = in the context before step 34:" in legend
