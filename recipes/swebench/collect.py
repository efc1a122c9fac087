#!/usr/bin/env python3
"""Collect a run matrix into one table: pass@1, steps, agent and memory tokens per instance and strategy,
and per strategy the mean and standard deviation over repeated runs (the paper's stability claim).

Resolution comes from each instance's grade.json (local runs) or from SWE-bench harness reports
given as `--report <strategy>/run<r>=<report.json>` (a report lists `resolved_ids`).
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROW_FIELDS = [
    "strategy", "repeat", "instance_id", "resolved", "exit_status", "steps",
    "agent_tokens", "context_tokens", "memory_tokens", "memory_calls", "cost",
]  # fmt: skip


def _usage_tokens(messages: list[dict[str, Any]]) -> int | None:
    """Prompt + completion tokens the agent's model reported (None when it reports none, e.g. test models)."""
    total, seen = 0, False
    for message in messages:
        usage = ((message.get("extra") or {}).get("response") or {}).get("usage") or {}
        if usage:
            seen = True
            total += int(usage.get("prompt_tokens") or 0) + int(usage.get("completion_tokens") or 0)
    return total if seen else None


def run_row(strategy: str, repeat: int, instance_dir: Path, resolved_ids: set[str] | None) -> dict[str, Any]:
    """One (strategy, repeat, instance) from its trajectory, its ContextWeaver sidecars and its grade."""
    iid = instance_dir.name
    trajectory = json.loads((instance_dir / f"{iid}.traj.json").read_text(encoding="utf-8"))
    info = trajectory.get("info", {})
    graph = json.loads((instance_dir / f"{iid}.contextweaver.json").read_text(encoding="utf-8"))
    lines = (json.loads(x) for x in (instance_dir / f"{iid}.contexts.jsonl").read_text().splitlines() if x)
    contexts = [line for line in lines if "query" in line]  # other lines define cuts and reasons
    memory = graph.get("stats", {}).get("memory", {})
    grade = instance_dir / "grade.json"
    if resolved_ids is not None:
        resolved: bool | None = iid in resolved_ids
    elif grade.exists():
        resolved = bool(json.loads(grade.read_text())["resolved"])
    else:
        resolved = None
    return {
        "strategy": strategy,
        "repeat": repeat,
        "instance_id": iid,
        "resolved": resolved,
        "exit_status": info.get("exit_status"),
        "steps": info.get("model_stats", {}).get("api_calls"),
        "agent_tokens": _usage_tokens(trajectory.get("messages", [])),
        "context_tokens": sum(c["tokens"] for c in contexts),
        "memory_tokens": int(memory.get("prompt_tokens", 0)) + int(memory.get("completion_tokens", 0)),
        "memory_calls": int(memory.get("calls", 0)),
        "cost": info.get("model_stats", {}).get("instance_cost"),
    }


def collect_rows(output: Path, reports: dict[str, Path] | None = None) -> list[dict[str, Any]]:
    """Every run under <output>/<strategy>/run<r>/<instance_id>/."""
    rows = []
    for run_dir in sorted(output.glob("*/run*")):
        strategy, repeat = run_dir.parent.name, int(run_dir.name.removeprefix("run"))
        report = (reports or {}).get(f"{strategy}/{run_dir.name}")
        resolved_ids = set(json.loads(report.read_text())["resolved_ids"]) if report else None
        for instance_dir in sorted(p for p in run_dir.iterdir() if p.is_dir()):
            rows.append(run_row(strategy, repeat, instance_dir, resolved_ids))
    return rows


def mean_std(values: Iterable[float | None]) -> tuple[float | None, float | None]:
    """Mean and sample standard deviation (0 for a single value); None when nothing was measured."""
    present = [float(v) for v in values if v is not None]
    if not present:
        return None, None
    return statistics.fmean(present), statistics.stdev(present) if len(present) > 1 else 0.0


METRICS = ("resolved", "steps", "agent_tokens", "context_tokens", "memory_tokens")


def per_instance(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Strategy x instance: each metric's mean and std over the repeats."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[(row["strategy"], row["instance_id"])].append(row)
    table = []
    for (strategy, iid), group in sorted(groups.items()):
        entry: dict[str, Any] = {"strategy": strategy, "instance_id": iid, "repeats": len(group)}
        for metric in METRICS:
            entry[f"{metric}_mean"], entry[f"{metric}_std"] = mean_std(r[metric] for r in group)
        table.append(entry)
    return table


def summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per strategy: each repeat's mean over instances (pass@1 for `resolved`), then mean and std over repeats."""
    by_run: dict[str, dict[int, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        by_run[row["strategy"]][row["repeat"]].append(row)
    table = []
    for strategy, runs in sorted(by_run.items()):
        entry: dict[str, Any] = {
            "strategy": strategy,
            "repeats": len(runs),
            "instances": len(next(iter(runs.values()))),
        }
        for metric in METRICS:
            run_means = [mean_std(r[metric] for r in group)[0] for group in runs.values()]
            entry[f"{metric}_mean"], entry[f"{metric}_std"] = mean_std(run_means)
        table.append(entry)
    return table


def _cell(value: Any) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def markdown(table: list[dict[str, Any]], keys: list[str]) -> str:
    """A markdown table; `<metric>` columns show `mean ± std`."""
    head = [k for k in keys if not k.endswith("_std")]
    lines = ["| " + " | ".join(k.removesuffix("_mean") for k in head) + " |", "|" + "---|" * len(head)]
    for entry in table:
        cells = []
        for key in head:
            std_key = key.removesuffix("_mean") + "_std"
            cell = _cell(entry[key])
            if key.endswith("_mean") and entry.get(std_key) is not None:
                cell += f" ± {_cell(entry[std_key])}"
            cells.append(cell)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_tables(output: Path, rows: list[dict[str, Any]]) -> dict[str, Path]:
    """results.csv (one row per run), per_instance.csv, summary.csv and results.md."""
    paths = {name: output / f"{name}.csv" for name in ("results", "per_instance", "summary")}
    tables = {"results": rows, "per_instance": per_instance(rows), "summary": summary(rows)}
    for name, table in tables.items():
        with paths[name].open("w", newline="", encoding="utf-8") as out:
            fields = ROW_FIELDS if name == "results" else list(table[0]) if table else []
            writer = csv.DictWriter(out, fieldnames=fields)
            writer.writeheader()
            writer.writerows(table)
    text = ["# Summary (mean ± std over repeats; `resolved` is pass@1)", ""]
    text.append(markdown(tables["summary"], list(tables["summary"][0]) if rows else []))
    text += ["", "# Per instance (mean ± std over repeats)", ""]
    text.append(markdown(tables["per_instance"], list(tables["per_instance"][0]) if rows else []))
    paths["markdown"] = output / "results.md"
    paths["markdown"].write_text("\n".join(text) + "\n", encoding="utf-8")
    return paths


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=Path, help="the run matrix directory (run.py -o)")
    parser.add_argument(
        "--report", action="append", default=[], help="<strategy>/run<r>=<harness report.json>"
    )
    args = parser.parse_args(argv)
    reports = {key: Path(path) for key, _, path in (item.partition("=") for item in args.report)}
    paths = write_tables(args.output, collect_rows(args.output, reports))
    print(paths["markdown"].read_text())


if __name__ == "__main__":
    main()
