from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from contextweaver.export import graph_view, to_dot, to_mermaid


def dot_strings(text: str) -> list[str]:
    """Every double-quoted DOT string, unescaped; raises if a string is left open."""
    strings, i = [], 0
    while (start := text.find('"', i)) != -1:
        j, out = start + 1, []
        while True:
            if j >= len(text):
                raise AssertionError("unterminated DOT string")
            ch = text[j]
            if ch == "\\" and j + 1 < len(text):
                out.append({"n": "\n", '"': '"', "\\": "\\"}.get(text[j + 1], "\\" + text[j + 1]))
                j += 2
                continue
            if ch == '"':
                break
            out.append(ch)
            j += 1
        strings.append("".join(out))
        i = j + 1
    return strings


def test_view_labels_statuses_modes_and_children(graph, context):
    view = graph_view(graph, context)
    assert [n.status for n in view.nodes] == ["root", "unknown", "failed", "unknown", "passed"]
    assert [n.mode for n in view.nodes] == ["full", "compressed", "full", "full", "full"]
    assert view.nodes[1].children == [2, 4] and view.nodes[2].children == [3, 4]
    assert view.nodes[3].label.startswith("user: ")
    assert all(len(n.label) <= 48 for n in view.nodes)
    assert "\x1b" not in view.nodes[1].observation  # control characters dropped
    assert view.current == 4


def test_dot_keeps_every_string_closed_and_text_exact(graph, context):
    dot = to_dot(graph, context)
    strings = dot_strings(dot)
    view = graph_view(graph, context)
    for node in view.nodes:
        assert f"{node.id} [{node.status}]\n{node.label}" in strings
    assert len(re.findall(r"^  N\d+ -> N\d+ \[", dot, re.M)) == 6
    assert dot.rstrip().endswith("}") and dot.count("{") - dot.count("}") == sum(
        s.count("{") - s.count("}") for s in strings
    )


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz dot not installed")
def test_graphviz_parses_the_hostile_graph(graph, context, tmp_path):
    result = subprocess.run(
        ["dot", "-Tsvg"], input=to_dot(graph, context), capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.count('class="node"') == 5 and result.stdout.count('class="edge"') == 6


def test_mermaid_labels_hold_only_safe_characters_and_decode_back(graph, context, hostile):
    text = to_mermaid(graph, context)
    view = graph_view(graph, context)
    labels = re.findall(r'^  (N\d+)\["([^"]*)"\]$', text, re.M)
    assert [node_id for node_id, _ in labels] == [n.id for n in view.nodes]
    for (_, label), node in zip(labels, view.nodes, strict=True):
        assert not re.search(r"[<>\"\[\]{}();`|%\\#]|--", re.sub(r"#\d+;", "", label))
        decoded = re.sub(r"#(\d+);", lambda m: chr(int(m.group(1))), label)
        assert decoded == " ".join(f"{node.id} [{node.status}] {node.label}".split())
    edges = re.findall(r'^  N(\d+) -->\|"([^"]*)"\| N(\d+)$', text, re.M)
    assert len(edges) == 6 and all("--" not in label for _, label, _ in edges)
    assert "class N2 failed" in text and "class N4 passed" in text
    assert "<script" not in text and hostile not in text
