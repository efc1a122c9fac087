"""The grid runner (parallel, resumable) and the report it feeds (CSV, JSON, PNG, self-contained HTML)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from contextweaver.eval import aggregate, report, runner
from contextweaver.eval.runner import ResultStore, RunSettings, Unit, discover, run_grid

STRATEGIES = ["full", "sliding_window", "cw-paper", "cw-recency", "cw"]


def _run(folder: Path, out: Path, workers: int = 1, budgets: list | None = None) -> tuple[list[dict], int]:
    settings = RunSettings(budgets or [150, None])
    return run_grid(discover([folder]), STRATEGIES, [0], settings, out, workers=workers)


def test_discover_skips_unreadable_files_in_a_folder_but_not_named_ones(trajectory_dir: Path) -> None:
    found = discover([trajectory_dir])
    assert [Path(p).name for p, _ in found] == [
        "cart__cart-7.jsonl",
        "shop__shop-1.jsonl",
        "shop__shop-2.jsonl",
    ]
    with pytest.raises(Exception, match="notes.json"):
        discover([trajectory_dir / "notes.json"])


def test_parallel_run_saves_each_unit_and_a_rerun_reuses_them(trajectory_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    results, computed = _run(trajectory_dir, out, workers=2)
    assert computed == len(results) == 3 * len(STRATEGIES)
    assert len(list((out / "results").rglob("*.json"))) == computed
    again, recomputed = _run(trajectory_dir, out, workers=2)
    assert recomputed == 0 and again == results
    # a changed trajectory file and a new budget invalidate exactly what they touch
    changed = trajectory_dir / "cart__cart-7.jsonl"
    changed.write_text(
        changed.read_text() + '{"thought": "done", "action": "echo ok", "observation": "ok"}\n'
    )
    _, recomputed = _run(trajectory_dir, out)
    assert recomputed == len(STRATEGIES)
    _, recomputed = _run(trajectory_dir, out, budgets=[150, 300, None])
    assert recomputed == 3 * len(STRATEGIES)


def test_store_ignores_results_of_other_settings(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    unit = Unit("a.jsonl", "a", "cw-paper", 0)
    store.save(unit, {"fingerprint": "f1", "content_hash": "h", "budgets": {"none": []}})
    assert store.load(unit, "f1", "h", [None]) is not None
    assert store.load(unit, "f2", "h", [None]) is None
    assert store.load(unit, "f1", "h", [None, 100]) is None
    with_override = RunSettings([None], ["window=3"])
    assert with_override.fingerprint("cw-paper") != RunSettings([None]).fingerprint("cw-paper")
    assert with_override.fingerprint("full") == RunSettings([None]).fingerprint("full")


def test_results_of_other_code_are_not_reused(monkeypatch: pytest.MonkeyPatch) -> None:
    before = RunSettings([None]).fingerprint("cw")
    assert RunSettings([None]).fingerprint("cw") == before  # the same code resumes
    monkeypatch.setattr(runner, "code_digest", lambda: "edited")
    assert RunSettings([None]).fingerprint("cw") != before


@pytest.mark.slow
def test_report_files_are_complete_consistent_and_deterministic(trajectory_dir: Path, tmp_path: Path) -> None:
    results, _ = _run(trajectory_dir, tmp_path / "out")
    built = report.build(results, {"command": "contextweaver eval <runs> --note '<b>&'"})
    paths = report.write(built, tmp_path / "out")
    rows = list(csv.DictReader(paths["csv"].open()))
    assert {(r["strategy"], r["budget"]) for r in rows} == {
        (s, b) for s in STRATEGIES for b in ("150", "none")
    }
    full = next(r for r in rows if r["strategy"] == "full" and r["budget"] == "none")
    assert float(full["recall_pooled"]) == 1.0 and float(full["ratio_to_full"]) == 1.0
    data = json.loads(paths["json"].read_text())
    assert {g["group"] for g in data["groups"]} == {"cart", "shop"}
    assert any(v["group"] == "all" for v in data["adaptive_vs_arms"])
    for name in ("recall_vs_tokens.png", "tokens_over_steps_none.png"):
        assert paths[name].read_bytes().startswith(b"\x89PNG")
    html = paths["html"].read_text()
    assert "data:image/png;base64," in html and "http://" not in html and "<script" not in html
    assert "&lt;b&gt;&amp;" in html and "<b>&" not in html  # meta text escaped
    first = {name: path.read_bytes() for name, path in paths.items()}
    second = report.write(
        report.build(results, {"command": "contextweaver eval <runs> --note '<b>&'"}), tmp_path / "out"
    )
    assert {name: path.read_bytes() for name, path in second.items()} == first


def test_stability_columns_compare_seeds() -> None:
    def result(seed: int, kept: list[list[int]], covered: int) -> dict:
        steps = [
            {
                "step": 1,
                "tokens": 10,
                "full_tokens": 20,
                "items": 2,
                "covered": covered,
                "kept": kept,
                "seconds": 0.1,
            }
        ]
        return {
            "trajectory": "t",
            "group": "g",
            "strategy": "cw-llm",
            "seed": seed,
            "steps_total": 2,
            "llm": {"calls": 4, "prompt_tokens": 100, "completion_tokens": 20},
            "budgets": {"none": steps},
        }

    (row,) = aggregate.rows([result(0, [[1, 2]], 2), result(1, [[1, 1], [3, 3]], 1)])
    assert row.seeds == 2
    assert row.kept_jaccard == pytest.approx(1 / 3)
    assert row.recall_std == pytest.approx(0.3535, abs=1e-3)  # recalls 1.0 and 0.5
    assert row.recall_pooled == 1.0  # main numbers come from the first seed
    assert row.llm_calls_per_step == 2.0 and row.memory_tokens_per_step == 60.0
    (single,) = aggregate.rows([result(0, [[1, 2]], 2)])
    assert single.seeds == 1 and single.kept_jaccard != single.kept_jaccard  # NaN: nothing to compare
