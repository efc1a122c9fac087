#!/usr/bin/env python3
"""Run mini-swe-agent on SWE-bench instances once per strategy and repeat, with ContextWeaverAgent.

Layout: <output>/<strategy>/run<r>/<instance_id>/<instance_id>.traj.json (the agent's full history)
plus <instance_id>.contextweaver.json and .contexts.jsonl beside it, and <output>/<strategy>/run<r>/preds.json
for the SWE-bench harness. With `--environment local` (tests, dry runs) each instance's `local_repo`
is copied fresh per run and its `test_command` grades the result (grade.json); with Docker the
SWE-bench harness grades preds.json afterwards (see README.md).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import shutil
import traceback
from pathlib import Path
from typing import Any

import yaml

os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")

from minisweagent.config import get_config_from_spec  # noqa: E402
from minisweagent.environments.local import LocalEnvironment  # noqa: E402
from minisweagent.models import get_model  # noqa: E402
from minisweagent.run.benchmarks.swebench import (  # noqa: E402
    DATASET_MAPPING,
    filter_instances,
    get_sb_environment,
    update_preds_file,
)
from minisweagent.utils.serialize import recursive_merge  # noqa: E402

from contextweaver.integrations.minisweagent import ContextWeaverAgent  # noqa: E402


def load_instances(instances: str | None, subset: str, split: str) -> list[dict[str, Any]]:
    """A JSON/JSONL file of instances, or a SWE-bench dataset (downloads from the Hugging Face hub)."""
    if instances:
        text = Path(instances).read_text(encoding="utf-8")
        return (
            json.loads(text)
            if text.lstrip().startswith("[")
            else [json.loads(x) for x in text.splitlines() if x]
        )
    from datasets import load_dataset

    return list(load_dataset(DATASET_MAPPING.get(subset, subset), split=split))


def local_environment(config: dict[str, Any], instance: dict[str, Any], workdir: Path) -> LocalEnvironment:
    """A fresh copy of the instance's repository, so every run starts from the same state."""
    repo = workdir / "repo"
    if repo.exists():
        shutil.rmtree(repo)
    shutil.copytree(Path(instance["local_repo"]), repo, symlinks=True)
    settings = {k: v for k, v in config.get("environment", {}).items() if k in ("env", "timeout")}
    return LocalEnvironment(cwd=str(repo), **settings)


def run_instance(
    instance: dict[str, Any], strategy: dict[str, Any], config: dict[str, Any], run_dir: Path, local: bool
) -> dict[str, Any]:
    """One agent run; returns the exit status (and the local grade when graded here)."""
    instance_id = instance["instance_id"]
    instance_dir = run_dir / instance_id
    instance_dir.mkdir(parents=True, exist_ok=True)
    traj = instance_dir / f"{instance_id}.traj.json"
    model = get_model(config=config.get("model", {}))
    agent_config = {
        k: v for k, v in config.get("agent", {}).items() if k not in ("agent_class", "mode", "confirm_exit")
    }
    env = local_environment(config, instance, instance_dir) if local else get_sb_environment(config, instance)
    agent = ContextWeaverAgent(model, env, **{**agent_config, "contextweaver": strategy, "output_path": traj})
    exit_status, submission, extra = None, "", {}
    try:
        info = agent.run(instance["problem_statement"])
        exit_status, submission = info.get("exit_status"), info.get("submission", "")
    except Exception as exc:  # one instance failing must not stop the batch; the error is saved
        exit_status, extra = type(exc).__name__, {"traceback": traceback.format_exc()}
    agent.save(
        traj,
        {"info": {"exit_status": exit_status, "submission": submission, **extra}, "instance_id": instance_id},
    )
    update_preds_file(run_dir / "preds.json", instance_id, model.config.model_name, submission or "")
    result: dict[str, Any] = {"instance_id": instance_id, "exit_status": exit_status}
    if local and instance.get("test_command"):
        graded = env.execute({"command": instance["test_command"]})
        result["resolved"] = graded["returncode"] == 0
        (instance_dir / "grade.json").write_text(
            json.dumps({**result, "output": graded["output"][-4000:]}, indent=1)
        )
    return result


def run_matrix(
    instances: list[dict[str, Any]],
    config: dict[str, Any],
    recipe: dict[str, Any],
    output: Path,
    *,
    local: bool,
    workers: int = 1,
    repeats: int | None = None,
) -> list[dict[str, Any]]:
    """Every strategy x repeat x instance; repeats run in sequence so their numbers stay comparable."""
    results = []
    for name, strategy in recipe["strategies"].items():
        for repeat in range(1, (repeats or recipe.get("repeats", 1)) + 1):
            run_dir = output / name / f"run{repeat}"
            with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
                futures = [pool.submit(run_instance, i, strategy, config, run_dir, local) for i in instances]
                for future in futures:
                    results.append({"strategy": name, "repeat": repeat, **future.result()})
    return results


def main(argv: list[str] | None = None) -> None:
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", required=True, type=Path)
    parser.add_argument("--recipe", default=str(here / "recipe.yaml"))
    parser.add_argument(
        "-c", "--config", action="append", default=[], help="mini-swe-agent config files or key=value"
    )
    parser.add_argument(
        "--instances",
        help="JSON/JSONL instances instead of a dataset (needs local_repo for --environment local)",
    )
    parser.add_argument("--subset", default="verified")
    parser.add_argument("--split", default="test")
    parser.add_argument("--slice", default="", help="e.g. 0:50")
    parser.add_argument("--filter", default="", help="regex on instance ids")
    parser.add_argument("--repeats", type=int)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--environment", choices=("docker", "local"), default="docker")
    args = parser.parse_args(argv)

    recipe = yaml.safe_load(Path(args.recipe).read_text(encoding="utf-8"))
    config = recursive_merge(*(get_config_from_spec(spec) for spec in args.config or ["swebench.yaml"]))
    instances = filter_instances(
        load_instances(args.instances, args.subset, args.split),
        filter_spec=args.filter,
        slice_spec=args.slice,
    )
    results = run_matrix(
        instances,
        config,
        recipe,
        args.output,
        local=args.environment == "local",
        workers=args.workers,
        repeats=args.repeats,
    )
    (args.output / "runs.json").write_text(json.dumps(results, indent=1))
    print(f"{len(results)} runs in {args.output}; next: grade (README.md), then collect.py")


if __name__ == "__main__":
    main()
