"""Write the report: table (terminal, CSV, JSON), per-group table, verdicts, PNG plots, one HTML file.

Failed runs count in their strategy's `failed` column and are listed (failures.csv, the JSON, the HTML
and the terminal); every other number comes from the runs that finished.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from contextweaver.eval import aggregate, checks, plots
from contextweaver.eval.figures import number as fmt
from contextweaver.eval.frontier_report import frontier_lines, frontier_rows
from contextweaver.eval.html import render_html
from contextweaver.eval.report_data import Report
from contextweaver.eval.runner import failed
from contextweaver.prompt_cache import PRICES, PRICES_TAKEN

COLUMNS = [
    ("strategy", "strategy", "{}"),
    ("budget", "budget", "{}"),
    ("tokens_mean", "tokens", "{:,.0f}"),
    ("tokens_p95", "p95", "{:,.0f}"),
    ("ratio_to_full", "vs full", "{:.2f}"),
    ("recall_pooled", "recall", "{:.3f}"),
    ("recall_mean", "recall (mean)", "{:.3f}"),
    ("reach_pooled", "in context or one recall away", "{:.3f}"),
    ("history_pooled", "history evidence", "{:.3f}"),
    ("edit_pooled", "edit support", "{:.3f}"),
    ("trail_pooled", "artifact trail", "{:.3f}"),
    ("failing_pooled", "failing tests", "{:.3f}"),
    ("fresh_pooled", "edit freshness", "{:.3f}"),
    ("cuts_marked", "cuts marked", "{:.2f}"),
    ("marker_tokens", "recall marks (tokens/cut)", "{:.0f}"),
    ("recall_tokens", "recall answer (tokens)", "{:,.0f}"),
    ("llm_calls_per_step", "LLM calls/step", "{:.2f}"),
    ("memory_tokens_per_step", "memory tokens/step", "{:,.0f}"),
    ("time_vs_sliding", "time vs window", "{:.1f}x"),
    ("prefix_share", "prefix reuse", "{:.2f}"),
    ("input_vs_full", "input vs full", "{:.2f}"),
    ("cache_share", "from cache", "{:.2f}"),
    ("billed_anthropic", "billed (Anthropic)", "{:.2f}"),
    ("billed_openai", "billed (OpenAI)", "{:.2f}"),
    ("kept_jaccard", "kept Jaccard", "{:.3f}"),
    ("recall_std", "recall std", "{:.4f}"),
    ("failed", "failed runs", "{}"),
]
FAILURE_FIELDS = ["strategy", "trajectory", "seed", "source", "error"]
ERROR_CHARS = 200
"""Longest error shown per failed run in the terminal."""


def build(all_results: Sequence[dict[str, Any]], meta: dict[str, Any] | None = None) -> Report:
    results = [r for r in all_results if not failed(r)]
    failures = [r for r in all_results if failed(r)]
    rows = aggregate.rows(results)
    for row in rows:
        row.failed = sum(1 for f in failures if f["strategy"] == row.strategy)
    groups = aggregate.group_rows(results)
    meta = {"cache_prices": cache_prices(), **(meta or {})}
    report = Report(rows, groups, checks.recall_at_cost(rows), checks.adaptive_vs_arms(groups, rows), meta)
    report.failures = failures
    report.frontier = frontier_rows(results)
    if report.frontier:
        from contextweaver.eval.frontier_plot import frontier_png

        report.images["frontier.png"] = frontier_png(results)
    if rows:
        report.images["recall_vs_tokens.png"] = plots.recall_vs_tokens(rows)
        for budget in aggregate.budgets_of(results):
            series = aggregate.tokens_by_step(results, budget)
            runs = aggregate.run_lengths(results, budget)
            report.images[f"tokens_over_steps_{budget}.png"] = plots.tokens_over_steps(series, budget, runs)
    return report


def cache_prices() -> dict[str, Any]:
    """The prices behind the billed columns, with the day they were taken and where from."""
    return {"taken": PRICES_TAKEN, **{name: asdict(p) for name, p in PRICES.items()}}


def terminal_table(report: Report) -> Table:
    table = Table(
        title="ContextWeaver evaluation: every strategy at every budget",
        box=box.SIMPLE_HEAD,
        padding=(0, 1, 0, 0),
        pad_edge=False,
        show_edge=False,
    )
    names = max((len(row.strategy) for row in report.rows), default=8)
    for _, header, _ in COLUMNS:
        if header in ("strategy", "budget"):
            table.add_column(
                header, justify="left", no_wrap=True, min_width=names if header == "strategy" else 6
            )
        else:  # two lines a header ("artifact" over "trail"), so no header is cut short
            table.add_column(header.replace(" ", "\n", 1), justify="right", no_wrap=True)
    previous = None
    for row in report.rows:
        if previous is not None and row.budget != previous:
            table.add_section()
        previous = row.budget
        data = row.as_dict()
        table.add_row(*(fmt(data[key], pattern) for key, _, pattern in COLUMNS))
    return table


def verdict_lines(report: Report) -> list[tuple[str, bool | None]]:
    """Each verdict as a sentence, with whether it holds (None: no verdict, e.g. the full history)."""
    lines: list[tuple[str, bool | None]] = []
    for v in report.cost:
        if v.best is None:
            lines.append(
                (
                    f"sliding window @{v.budget}: no ContextWeaver strategy at the same budget within its "
                    f"{v.sliding_tokens:,.0f} tokens",
                    False,
                )
            )
            continue
        mark = "HOLDS" if v.holds else "does not hold"
        text = (
            f"sliding window @{v.budget}: best ContextWeaver at the same budget within its tokens is {v.best}, "
            f"recall {v.best_recall:.3f} at {v.best_tokens:,.0f} tokens vs sliding window "
            f"{v.sliding_recall:.3f} at {v.sliding_tokens:,.0f} -> {mark}"
        )
        lines.append((text, v.holds))
    failing = [a for a in report.arms if not a.holds]
    if report.arms:
        text = (
            f"cw (adaptive) >= better of its arms cw-paper (ancestry) / cw-recency: "
            f"{len(report.arms) - len(failing)}/{len(report.arms)} "
            "(group, budget) cells hold"
            + ("" if not failing else "; not in: " + ", ".join(f"{a.group}@{a.budget}" for a in failing))
        )
        lines.append((text, not failing))
    lines += [
        (text, row.verdict_holds)
        for text, row in zip(frontier_lines(report.frontier), report.frontier, strict=True)
    ]
    return lines


def failure_lines(report: Report) -> list[str]:
    """A heading and one line per failed run (empty when none failed)."""
    if not report.failures:
        return []
    lines = [f"{len(report.failures)} run(s) FAILED (not in the numbers above):"]
    for f in report.failures:  # the whole error is in failures.csv, the JSON and the HTML
        error = f["error"] if len(f["error"]) <= ERROR_CHARS else f["error"][: ERROR_CHARS - 3] + "..."
        lines.append(f"  {f['strategy']} on {f['trajectory']} (seed {f['seed']}): {error}")
    return lines


def print_report(report: Report, console: Console | None = None, *, wide: bool = False) -> None:
    """The compact table in the console's width (every column with `wide`, the console widened to it),
    the legend, the frontier, the other verdicts and any failures."""
    from contextweaver.eval.terminal_tables import LEGEND, compact_table, frontier_table

    console = console or Console()
    if wide:
        table = terminal_table(report)
        console.width = max(console.width, Console(width=1000).measure(table).maximum)  # never squeezed
        console.print(table)
    else:
        table, left_out = compact_table(report.rows, bool(report.failures), console.width)
        console.print(table)
        if left_out:
            console.print(f"--wide: every column (also {', '.join(left_out)})", markup=False, highlight=False)
    console.print(f"{LEGEND} ({PRICES_TAKEN}; contextweaver.prompt_cache)", markup=False, highlight=False)
    if report.frontier:
        console.print(frontier_table(report.frontier, console.width)[0])
    frontier = len(report.frontier)
    texts = [text for text, _ in verdict_lines(report)]
    for line in texts[: len(texts) - frontier] + failure_lines(report):
        console.print(line, markup=False, highlight=False)


def write(report: Report, out: str | Path) -> dict[str, Path]:
    """Write every artifact under `out`; returns their paths by kind."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "csv": out / "report.csv",
        "json": out / "report.json",
        "groups_csv": out / "groups.csv",
        "failures_csv": out / "failures.csv",
        "html": out / "report.html",
    }
    with paths["csv"].open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=[f for f in aggregate.Row.__dataclass_fields__])
        writer.writeheader()
        for row in report.rows:
            writer.writerow({k: _csv(v) for k, v in row.as_dict().items()})
    with paths["groups_csv"].open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=[f for f in aggregate.GroupRow.__dataclass_fields__])
        writer.writeheader()
        for group in report.groups:
            writer.writerow({k: _csv(v) for k, v in asdict(group).items()})
    with paths["failures_csv"].open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=FAILURE_FIELDS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(report.failures)
    data = {
        "meta": report.meta,
        "rows": [r.as_dict() for r in report.rows],
        "groups": [asdict(g) for g in report.groups],
        "recall_at_cost": [{**asdict(v), "holds": v.holds} for v in report.cost],
        "adaptive_vs_arms": [{**asdict(v), "holds": v.holds} for v in report.arms],
        "frontier": [{**asdict(row), "holds": row.verdict_holds} for row in report.frontier],
        "images": sorted(report.images),
        "failures": report.failures,
    }
    paths["json"].write_text(json.dumps(_clean(data), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    for name, png in report.images.items():
        (out / name).write_bytes(png)
        paths[name] = out / name
    paths["html"].write_text(render_html(report, COLUMNS, verdict_lines(report)), encoding="utf-8")
    return paths


def _csv(value: Any) -> Any:
    if isinstance(value, float):
        return "" if math.isnan(value) else round(value, 6)
    return value


def _clean(value: Any) -> Any:
    """JSON has no NaN: missing numbers become null."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value
