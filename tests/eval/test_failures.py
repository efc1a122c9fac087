"""A run that fails (its file does not read, its strategy raises) is recorded as failed and listed; the
other runs finish, the report is written, and `contextweaver eval` exits non-zero."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from contextweaver.cli import main
from contextweaver.config import ModelConfig
from contextweaver.eval import report
from contextweaver.eval.runner import RunSettings, discover, failed, run_grid

STRATEGIES = ["full", "sliding_window", "cw-paper"]


def add_broken_file(folder: Path) -> Path:
    """A JSON Lines trajectory cut off in the middle of a line, as an interrupted writer leaves it."""
    good = (folder / "shop__shop-1.jsonl").read_text(encoding="utf-8")
    broken = folder / "shop__shop-9.jsonl"
    broken.write_text(good[: len(good) // 2], encoding="utf-8")
    return broken


@pytest.mark.slow
def test_a_broken_file_fails_its_runs_and_the_others_finish(trajectory_dir: Path, tmp_path: Path) -> None:
    broken = add_broken_file(trajectory_dir)
    out = tmp_path / "report"
    args = ["eval", str(trajectory_dir), "-s", ",".join(STRATEGIES), "-b", "150,none", "-o", str(out)]
    result = CliRunner().invoke(main, [*args, "-j", "2", "--no-progress"])
    assert result.exit_code == 1, result.output
    assert "9 run(s) computed, 0 reused, 3 failed" in result.output
    assert "3 run(s) FAILED" in result.output and "shop__shop-9" in result.output
    listed = list(csv.DictReader((out / "failures.csv").open(encoding="utf-8")))
    assert sorted(f["strategy"] for f in listed) == sorted(STRATEGIES)
    assert {f["source"] for f in listed} == {str(broken)}
    assert all("invalid JSON" in f["error"] for f in listed)
    rows = list(csv.DictReader((out / "report.csv").open(encoding="utf-8")))
    assert len(rows) == 2 * len(STRATEGIES)
    assert all(r["failed"] == "1" and r["trajectories"] == "3" for r in rows)
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert len(data["failures"]) == 3 and all(r["failed"] == 1 for r in data["rows"])
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "Failed runs (3)" in html and "shop__shop-9" in html
    assert not list((out / "results").rglob("shop__shop-9*"))  # never stored: a rerun tries again
    again = CliRunner().invoke(main, [*args, "-j", "1", "--no-progress"])
    assert again.exit_code == 1 and "0 run(s) computed, 9 reused, 3 failed" in again.output


@pytest.mark.slow
def test_a_strategy_that_raises_in_a_worker_fails_only_its_own_runs(
    trajectory_dir: Path, tmp_path: Path
) -> None:
    no_key = ModelConfig(backend="anthropic")  # names no key variable: building the client raises
    settings = RunSettings([None], model_config=no_key)
    results, computed = run_grid(
        discover([trajectory_dir]), ["full", "cw-llm"], [0], settings, tmp_path, workers=2
    )
    assert computed == 6
    failures = [r for r in results if failed(r)]
    assert {(f["strategy"], f["trajectory"]) for f in failures} == {
        ("cw-llm", t) for t in ("cart__cart-7", "shop__shop-1", "shop__shop-2")
    }
    assert all(f["error"].startswith("MissingAPIKey:") and "api_key_env" in f["error"] for f in failures)
    assert all("Traceback" in f["traceback"] for f in failures)
    finished = [r for r in results if not failed(r)]
    assert {r["strategy"] for r in finished} == {"full"} and len(finished) == 3
    built = report.build(results)
    assert [(row.strategy, row.failed) for row in built.rows] == [("full", 0)]
    assert report.failure_lines(built)[0].startswith("3 run(s) FAILED")


def test_discover_sorts_broken_trajectories_from_other_files(trajectory_dir: Path) -> None:
    broken = add_broken_file(trajectory_dir)
    unreadable: dict[str, str] = {}
    found = discover([trajectory_dir], unreadable)
    assert len(found) == 3 and list(unreadable) == [str(broken)]  # notes.json is no trajectory: skipped
    named: dict[str, str] = {}
    assert discover([broken], named) == [] and list(named) == [str(broken)]
