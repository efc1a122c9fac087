"""The SWE-bench recipe's wiring end to end: fake instances (toy repositories), mini-swe-agent's
deterministic model and local environment, two strategies x two repeats, then the results table."""

from __future__ import annotations

import csv
import importlib.util
import json
import statistics
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from tests.integrations.toyrepo import CALC, FIX_TURNS, PYTHON, TASK, make_repo, text_output

pytest.importorskip("minisweagent")

RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "swebench"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"swebench_recipe_{name}", RECIPE / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("recipe")
    fixable = make_repo(tmp / "fixable")
    unfixable = make_repo(tmp / "unfixable")  # mul is wrong too: the scripted fix of add is not enough
    (unfixable / "calc.py").write_text(CALC.replace("return a * b", "return a ** b"))
    test_command = f"{PYTHON} -m pytest -q -p no:cacheprovider test_calc.py"
    instances = [
        {
            "instance_id": "toy__calc-1",
            "problem_statement": TASK,
            "local_repo": str(fixable),
            "test_command": test_command,
        },
        {
            "instance_id": "toy__calc-2",
            "problem_statement": TASK,
            "local_repo": str(unfixable),
            "test_command": test_command,
        },
    ]
    (tmp / "instances.json").write_text(json.dumps(instances))
    config = {
        "agent": {"system_template": "You fix bugs.", "instance_template": "{{task}}", "step_limit": 20},
        "model": {
            "model_class": "deterministic",
            "model_name": "deterministic",
            "outputs": [text_output(t, c) for t, c in FIX_TURNS],
        },
    }
    (tmp / "config.yaml").write_text(yaml.safe_dump(config))
    recipe = yaml.safe_load((RECIPE / "recipe.yaml").read_text())
    for strategy in recipe["strategies"].values():
        strategy["window"] = 2
    (tmp / "recipe.yaml").write_text(yaml.safe_dump(recipe))
    output = tmp / "runs"
    load("run").main(
        ["-o", str(output), "--recipe", str(tmp / "recipe.yaml"), "-c", str(tmp / "config.yaml"),
         "--instances", str(tmp / "instances.json"), "--environment", "local", "--repeats", "2"]
    )  # fmt: skip
    load("collect").main([str(output)])
    return output


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.slow
def test_every_run_leaves_a_trajectory_sidecars_a_grade_and_predictions(matrix: Path):
    for strategy in ("contextweaver", "sliding_window"):
        for repeat in (1, 2):
            run_dir = matrix / strategy / f"run{repeat}"
            preds = json.loads((run_dir / "preds.json").read_text())
            assert set(preds) == {"toy__calc-1", "toy__calc-2"}
            assert "+    return a + b" in preds["toy__calc-1"]["model_patch"]
            for iid, resolved in (("toy__calc-1", True), ("toy__calc-2", False)):
                folder = run_dir / iid
                assert json.loads((folder / "grade.json").read_text())["resolved"] is resolved
                graph = json.loads((folder / f"{iid}.contextweaver.json").read_text())
                ran = {"contextweaver": "cw-paper"}.get(strategy, strategy)  # recipe.yaml's arm
                assert graph["strategy"] == ran and len(graph["nodes"]) == len(FIX_TURNS) - 1
                fixed = "return a + b" in (folder / "repo" / "calc.py").read_text()
                assert fixed  # each run edited its own fresh copy of the repository


def test_rows_come_from_the_files_of_each_run(matrix: Path):
    rows = read_csv(matrix / "results.csv")
    assert len(rows) == 2 * 2 * 2
    for row in rows:
        folder = matrix / row["strategy"] / f"run{row['repeat']}" / row["instance_id"]
        lines = (folder / f"{row['instance_id']}.contexts.jsonl").read_text().splitlines()
        contexts = [c for c in map(json.loads, lines) if "query" in c]
        assert int(row["context_tokens"]) == sum(c["tokens"] for c in contexts)
        assert int(row["steps"]) == len(contexts) == len(FIX_TURNS)
        assert row["resolved"] == str(row["instance_id"] == "toy__calc-1")
        assert (
            row["memory_tokens"] == "0" and row["agent_tokens"] == ""
        )  # heuristic; the test model reports no usage
    tokens = {r["strategy"]: int(r["context_tokens"]) for r in rows if r["instance_id"] == "toy__calc-1"}
    assert tokens["contextweaver"] != tokens["sliding_window"]


def test_summary_gives_pass_at_1_and_mean_and_std_over_repeats(matrix: Path):
    rows = read_csv(matrix / "results.csv")
    summary = {r["strategy"]: r for r in read_csv(matrix / "summary.csv")}
    for strategy, entry in summary.items():
        assert float(entry["resolved_mean"]) == 0.5 and float(entry["resolved_std"]) == 0.0
        per_repeat = [
            statistics.fmean(
                int(r["context_tokens"]) for r in rows if r["strategy"] == strategy and r["repeat"] == rep
            )
            for rep in ("1", "2")
        ]
        assert float(entry["context_tokens_mean"]) == pytest.approx(statistics.fmean(per_repeat))
        assert float(entry["context_tokens_std"]) == pytest.approx(statistics.stdev(per_repeat))
    markdown = (matrix / "results.md").read_text()
    assert "| strategy | repeats | instances | resolved |" in markdown and "0.500 ± 0.000" in markdown


def test_mean_and_std_over_repeats_that_differ():
    collect = load("collect")
    rows = [
        {"strategy": "s", "repeat": rep, "instance_id": iid, "resolved": res, "steps": steps,
         "agent_tokens": None, "context_tokens": 10 * steps, "memory_tokens": 0}
        for rep, iid, res, steps in [(1, "a", True, 4), (1, "b", False, 8), (2, "a", True, 6), (2, "b", True, 10)]
    ]  # fmt: skip
    (entry,) = collect.summary(rows)
    assert entry["resolved_mean"] == 0.75 and entry["resolved_std"] == pytest.approx(
        statistics.stdev([0.5, 1.0])
    )
    assert entry["steps_mean"] == 7 and entry["steps_std"] == pytest.approx(statistics.stdev([6, 8]))
    assert entry["agent_tokens_mean"] is None  # nothing measured is not zero
    per = {e["instance_id"]: e for e in collect.per_instance(rows)}
    assert per["b"]["resolved_mean"] == 0.5 and per["a"]["steps_std"] == pytest.approx(
        statistics.stdev([4, 6])
    )
