from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner
from tests.shared_data import absent

from contextweaver.cli import main
from contextweaver.examples import example_path


def test_graph_writes_all_formats_for_the_example(tmp_path):
    args = ["graph", str(example_path()), "--out", str(tmp_path), "-c", "mode=per_step"]
    result = CliRunner().invoke(main, args)  # coloured by a context woven per step (lazy keeps all full)
    assert result.exit_code == 0, result.output
    for suffix in (".dot", ".mmd", ".html"):
        assert (tmp_path / f"bugfix{suffix}").is_file()
    assert (tmp_path / "bugfix.svg").is_file() == (shutil.which("dot") is not None)
    page = (tmp_path / "bugfix.html").read_text(encoding="utf-8")
    data = json.loads(page.split('id="cw-data">', 1)[1].split("</script>", 1)[0])
    steps = sum(1 for line in example_path().read_text(encoding="utf-8").splitlines()) - 1
    assert len(data["nodes"]) == steps + 1
    assert data["current"] == steps
    assert {n["mode"] for n in data["nodes"]} >= {"full", "compressed"}


def test_format_subset_and_bad_format(tmp_path):
    runner = CliRunner()
    result = runner.invoke(
        main, ["graph", str(example_path()), "--out", str(tmp_path), "--format", "mermaid"]
    )
    assert result.exit_code == 0 and [p.name for p in tmp_path.iterdir()] == ["bugfix.mmd"]
    bad = runner.invoke(main, ["graph", str(example_path()), "--out", str(tmp_path), "--format", "png"])
    assert bad.exit_code == 2 and "valid: dot, mermaid, html" in bad.output


def test_multi_run_file_needs_an_instance(tmp_path):
    events = [{"kind": "ActionEvent", "id": "a", "llm_response_id": "r", "tool_name": "bash", "tool_call_id": "c",
               "tool_call": {"id": "c", "name": "bash", "arguments": "{\"command\": \"ls\"}"}, "action": {"command": "ls"}},
              {"kind": "ObservationEvent", "tool_call_id": "c", "observation": {"output": "a.txt"}}]  # fmt: skip
    path = tmp_path / "output.jsonl"
    path.write_text(
        "".join(
            json.dumps({"instance_id": i, "instruction": "t", "history": events}) + "\n" for i in ("x", "y")
        )
    )
    runner = CliRunner()
    result = runner.invoke(main, ["graph", str(path), "--out", str(tmp_path / "o"), "--format", "dot"])
    assert result.exit_code == 2 and "holds 2 runs (x, y)" in result.output
    chosen = runner.invoke(main, ["graph", f"{path}#y", "--out", str(tmp_path / "o"), "--format", "dot"])
    assert chosen.exit_code == 0, chosen.output
    assert (tmp_path / "o" / "output-y.dot").is_file()


@pytest.mark.data
def test_graph_of_a_shared_run(tmp_path):
    from pathlib import Path

    run = (
        Path(__file__).resolve().parents[2]
        / ".."
        / "shared"
        / "data"
        / "trajectories"
        / "swe-agent"
        / "demonstrations"
        / "function_calling_simple.traj"
    )
    if not run.exists():
        pytest.skip(absent(run))
    result = CliRunner().invoke(main, ["graph", str(run), "--out", str(tmp_path), "--format", "html,dot"])
    assert result.exit_code == 0, result.output
    assert "missing_colon.py" in (tmp_path / "function_calling_simple.html").read_text(encoding="utf-8")


def test_the_graph_is_coloured_by_the_strategy_it_names(tmp_path):
    """`cw` by default, another with -s; the page's title says which and at what budget."""

    def page(*extra):
        args = ["graph", str(example_path()), "--out", str(tmp_path), "--format", "html", *extra]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        text = (tmp_path / "bugfix.html").read_text(encoding="utf-8")
        data = json.loads(text.split('id="cw-data">', 1)[1].split("</script>", 1)[0])
        return text, {n["mode"] for n in data["nodes"]}

    text, modes = page()
    assert "coloured by cw&#x27;s context, no budget" in text and modes == {
        "full"
    }  # cw cuts nothing unbudgeted
    text, modes = page("-s", "cw-select")
    assert "coloured by cw-select&#x27;s context, no budget" in text and "compressed" in modes
    refused = CliRunner().invoke(
        main, ["graph", str(example_path()), "--out", str(tmp_path), "-s", "masking"]
    )
    assert refused.exit_code == 2 and "baseline" in refused.output
