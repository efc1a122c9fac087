"""`contextweaver eval` end to end on runs the test writes: report files, resumption, errors."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from contextweaver.cli import main
from contextweaver.eval.splits import split_of


@pytest.mark.slow
def test_eval_writes_the_report_and_a_rerun_reuses_results(trajectory_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    args = [
        "eval",
        str(trajectory_dir),
        "-s",
        "full,sliding_window,bm25,llm_summary,cw-adaptive",
        "-b",
        "150,none",
    ]
    args += ["-o", str(out), "-j", "2", "--no-progress"]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    assert "15 run(s) computed, 0 reused" in first.output
    assert "sliding_window" in first.output and "llm_summary" in first.output
    for name in ("report.csv", "report.json", "groups.csv", "report.html", "recall_vs_tokens.png"):
        assert (out / name).stat().st_size > 0
    second = CliRunner().invoke(main, args)
    assert second.exit_code == 0, second.output
    assert "0 run(s) computed, 15 reused" in second.output


def test_eval_rejects_unknown_strategies_and_bad_settings(trajectory_dir: Path, tmp_path: Path) -> None:
    bad = CliRunner().invoke(main, ["eval", str(trajectory_dir), "-s", "magic", "-o", str(tmp_path)])
    assert bad.exit_code != 0 and "cw-adaptive" in bad.output
    wrong = CliRunner().invoke(main, ["eval", str(trajectory_dir), "-s", "cw-heuristic", "-c", "window=0"])
    assert wrong.exit_code != 0 and "window" in wrong.output
    budget = CliRunner().invoke(main, ["eval", str(trajectory_dir), "-b", "lots"])
    assert budget.exit_code != 0 and "token count" in budget.output


def _nebius_run(instance: str) -> dict[str, object]:
    return {
        "instance_id": instance,
        "model_name": "m",
        "target": True,
        "trajectory": [
            {"role": "system", "system_prompt": "You are a programmer.", "text": "None"},
            {"role": "user", "text": "ISSUE: widgets break on empty input"},
            {"role": "ai", "text": "Open it.\n```\nopen widgets/core.py\n```\n"},
            {
                "role": "user",
                "text": "[File: /repo/widgets/core.py (2 lines total)]\n1:class Widget:\n2:    pass",
            },
            {"role": "ai", "text": "Done.\n\n```\nsubmit\n```"},
        ],
    }


@pytest.mark.slow
def test_eval_reads_an_archive_of_runs_and_keeps_one_split(tmp_path: Path) -> None:
    """The training archives are evaluated in place, and `--split` reports the held-out runs alone."""
    ids = [f"octo__widgets-{n}" for n in range(40)]
    held_out = [i for i in ids if split_of(i) == "validation"][:2]
    chosen = held_out + [i for i in ids if split_of(i) == "train"][:3]
    archive = tmp_path / "runs.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for instance in chosen:
            data = json.dumps(_nebius_run(instance)).encode()
            info = tarfile.TarInfo(f"runs/{instance}.json")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    base = ["eval", str(archive), "-s", "sliding_window", "-b", "none", "-j", "1", "--no-progress"]
    everything = CliRunner().invoke(main, [*base, "-o", str(tmp_path / "all")])
    assert everything.exit_code == 0, everything.output
    assert "5 trajectories" in everything.output
    validation = CliRunner().invoke(main, [*base, "--split", "validation", "-o", str(tmp_path / "val")])
    assert validation.exit_code == 0, validation.output
    assert "2 trajectories" in validation.output
    stored = sorted(
        p.stem for p in (tmp_path / "val" / "results" / "sliding_window" / "seed0").glob("*.json")
    )
    assert stored == sorted(held_out)


def test_eval_half_budget_is_a_row_beside_the_fixed_ones(trajectory_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    args = ["eval", str(trajectory_dir), "-s", "cw,masking", "-b", "150,half", "-o", str(out), "-j", "1"]
    result = CliRunner().invoke(main, [*args, "--no-progress"])
    assert result.exit_code == 0, result.output
    rows = json.loads((out / "report.json").read_text())["rows"]
    assert sorted({(r["strategy"], r["budget"]) for r in rows}) == [
        ("cw", "150"), ("cw", "half"), ("masking", "150"), ("masking", "half")
    ]  # fmt: skip
    assert "half = each run at half" in CliRunner().invoke(main, ["eval", "--help"]).output


def test_runs_whose_roots_exceed_a_budget_are_named_and_the_rest_measured(tmp_path: Path) -> None:
    """A budget below a few runs' system prompt and task refuses those runs at it, not the evaluation."""
    from tests.eval.conftest import bugfix_steps, write_jsonl

    folder = tmp_path / "runs"
    folder.mkdir()
    steps = bugfix_steps()
    write_jsonl(folder / "shop__shop-1.jsonl", steps)
    write_jsonl(
        folder / "shop__shop-2.jsonl", steps, task="Fix it. " + "Background: the shop's history. " * 400
    )
    out = tmp_path / "report"
    args = [
        "eval",
        str(folder),
        "-s",
        "cw,masking",
        "-b",
        "1500,none",
        "-o",
        str(out),
        "-j",
        "1",
        "--no-progress",
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "at 1500: 1 of 2 runs refused (" in result.output
    assert "shop__shop-2 (root " in result.output and "-b 2" in result.output
    rows = {(r["strategy"], r["budget"]): r for r in json.loads((out / "report.json").read_text())["rows"]}
    assert rows[("cw", "1500")]["trajectories"] == 1 and rows[("cw", "none")]["trajectories"] == 2
