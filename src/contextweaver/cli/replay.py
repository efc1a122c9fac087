"""`contextweaver replay`: feed a recorded run step by step; show what was kept and why, and the tokens."""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from contextweaver.config import load_config
from contextweaver.eval.evidence import covered, next_step_evidence
from contextweaver.eval.replay import replay
from contextweaver.examples import example_path
from contextweaver.formats import TrajectoryError, load_trajectory
from contextweaver.prompt_cache import PRICES_TAKEN, run_cost
from contextweaver.protocols import Strategy
from contextweaver.strategies import REPLAY_DEFAULT, build_strategy, spec
from contextweaver.weave import BudgetError

STATUS_MARK = {"passed": "✓ passed", "failed": "✗ failed", "superseded": "↷ superseded", "unknown": "·"}


def _ranges(indices: list[int]) -> str:
    """[1,2,3,7] -> "1-3,7": compact lists of steps for a terminal column."""
    out: list[str] = []
    for i in indices:
        if out and out[-1].split("-")[-1] == str(i - 1):
            out[-1] = f"{out[-1].split('-')[0]}-{i}"
        else:
            out.append(str(i))
    return ",".join(out)


def _factory(name: str, settings: dict[str, Any]) -> Callable[[], Strategy]:
    """ContextWeaver names take the user's settings; baselines run at their standard settings."""
    own = settings if spec(name).baseline is None else {}
    return lambda: build_strategy(name, own).strategy


@click.command()
@click.argument("trajectory", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--strategy", "strategies", default=",".join(REPLAY_DEFAULT), show_default=True, help="comma-separated"
)
@click.option("--budget", type=int, default=None, help="hard token budget for every context")
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False), help="YAML settings")
@click.option("-c", "overrides", multiple=True, help="override a setting: -c window=8")
@click.option("--explain", is_flag=True, help="print every step's keep/compress reason for ContextWeaver")
@click.option("--json", "as_json", is_flag=True, help="machine-readable output, one object per step")
def command(
    trajectory: Path | None,
    strategies: str,
    budget: int | None,
    config_path: str | None,
    overrides: tuple[str, ...],
    explain: bool,
    as_json: bool,
) -> None:
    """Replay TRAJECTORY (default: the example run the package ships) through several strategies."""
    path = trajectory or example_path()
    try:
        config = load_config(config_path, list(overrides))
        recorded = load_trajectory(path)
    except (TrajectoryError, ValueError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    names = [n.strip() for n in strategies.split(",") if n.strip()]
    settings = config.model_dump(include=config.model_fields_set)  # what the user set, not the defaults
    evidence = {e.index: e.items for e in next_step_evidence(recorded)}
    try:
        runs = {name: list(replay(recorded, _factory(name, settings), budget)) for name in names}
    except (BudgetError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    console = Console(highlight=False, width=max(Console().width, 132))
    first = runs[names[0]]
    if as_json:
        for i, record in enumerate(first):
            row = {"step": record.index, "kept": record.context.kept}
            row.update({f"tokens.{n}": runs[n][i].context.tokens for n in names})
            click.echo(json.dumps(row))
        return
    table = Table(
        title=f"{path.name}: {len(recorded.steps)} steps ({recorded.format}); context tokens per strategy"
    )
    table.add_column("step", justify="right")
    table.add_column("action", no_wrap=True, overflow="ellipsis", max_width=34)
    table.add_column("status", no_wrap=True)
    table.add_column("parents", no_wrap=True)
    table.add_column(f"full in {names[0]}", overflow="fold", max_width=22)
    for name in names:
        table.add_column(name, justify="right", no_wrap=True)
    for i, record in enumerate(first):
        step = recorded.steps[record.index - 1]
        node = record.node
        table.add_row(
            str(record.index),
            (step.action.splitlines() or [""])[0][:48],
            STATUS_MARK.get(node.validation_status.value, "") if node else "",
            ",".join(map(str, node.parent_ids)) if node else "",
            _ranges(record.context.kept),
            *[f"{runs[n][i].context.tokens:,}" for n in names],
        )
    console.print(table)
    if explain:
        for decision in first[-1].context.decisions:
            console.print(f"  step {decision.index:>3} {decision.mode:<10} {decision.reason}")
    summary = Table(title="Summary (next-step evidence recall: EVALUATION.md)")
    for column in (
        "strategy",
        "mean tokens",
        "max tokens",
        "evidence recall",
        "items",
        "from cache",
        "billed (Anthropic)",
        "billed (OpenAI)",
    ):
        summary.add_column(column)
    for name in names:
        hits = total = 0
        for record in runs[name]:
            items = evidence.get(record.index + 1, frozenset())
            hits += covered(items, record.context.text())
            total += len(items)
        tokens = [r.context.tokens for r in runs[name]]
        recall = f"{hits / total:.3f}" if total else "n/a"
        cost = run_cost([(r.context.messages, r.context.full_history_tokens) for r in runs[name]])
        summary.add_row(
            name,
            f"{statistics.mean(tokens):,.0f}",
            f"{max(tokens):,}",
            recall,
            str(total),
            f"{cost.cache_share:.2f}",
            f"{cost.billed['anthropic']:.2f}",
            f"{cost.billed['openai']:.2f}",
        )
    console.print(summary)
    console.print(
        f"billed: input at prompt-cache prices ({PRICES_TAKEN}) over the full history without a cache"
    )
