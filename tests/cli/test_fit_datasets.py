"""`fit` takes each argument as one dataset: two folders of one name are two datasets, named apart."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from contextweaver.cli import main
from contextweaver.cli.fit import dataset_names
from tests.eval.conftest import write_jsonl
from tests.eval.test_fit import long_range_steps


def test_names_that_clash_are_told_apart_by_the_shortest_parent_path() -> None:
    assert dataset_names(("/x/a/trajs", "/x/b/trajs", "/y/c.tar.gz")) == ["a/trajs", "b/trajs", "c"]
    assert dataset_names(("/x/a/run/trajs", "/z/a/run/trajs")) == ["x/a/run/trajs", "z/a/run/trajs"]
    assert dataset_names(("/x/trajs",)) == ["trajs"]


def test_two_folders_named_trajs_are_two_rows(tmp_path: Path) -> None:
    """Both were `trajs`: one dataset row for two, their margins pooled."""
    inputs = []
    for agent in ("agent-a", "agent-b"):
        folder = tmp_path / agent / "trajs"
        folder.mkdir(parents=True)
        for n in range(2):
            write_jsonl(folder / f"{agent}-{n}.jsonl", long_range_steps(n))
        inputs.append(str(folder))
    out = tmp_path / "weights.json"
    args = ["fit", *inputs, "--holdout", "0", "--rounds", "1", "-o", str(out), "--no-progress"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    document = json.loads(out.read_text())
    assert set(document["scores"]["fit"]["after"]["datasets"]) == {"agent-a/trajs", "agent-b/trajs"}
    assert "agent-a/trajs" in result.output and "agent-b/trajs" in result.output
