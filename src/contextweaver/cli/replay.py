"""`contextweaver replay`: feed a recorded run step by step; show what was kept and why, and the tokens.

The strategies are replayed in lockstep and each step is summed up as it is produced (with `--json`,
printed at once), so memory holds one context per strategy, however long the run.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from contextweaver.config import load_config
from contextweaver.eval.lockstep import Lockstep, Totals
from contextweaver.eval.metrics import index_runs
from contextweaver.eval.replay import ReplayStep
from contextweaver.examples import example_path
from contextweaver.formats import TrajectoryError, load_trajectory
from contextweaver.prompt_cache import PRICES_TAKEN
from contextweaver.protocols import Strategy
from contextweaver.strategies import REPLAY_DEFAULT, build_strategy, spec
from contextweaver.types import Node
from contextweaver.weave import BudgetError

STATUS_MARK = {"passed": "✓ passed", "failed": "✗ failed", "superseded": "↷ superseded", "unknown": "·"}


def _ranges(indices: list[int]) -> str:
    """[1,2,3,7] -> "1-3,7": compact lists of steps for a terminal column."""
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in index_runs(indices))


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
        names = [n.strip() for n in strategies.split(",") if n.strip()]
        settings = config.model_dump(include=config.model_fields_set)  # what the user set, not the defaults
        lockstep = Lockstep(recorded, names, lambda name: _factory(name, settings)(), budget)
    except (TrajectoryError, ValueError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    rows: list[tuple[Node, list[str]]] = []
    last: ReplayStep | None = None
    try:
        for step in lockstep:  # one step's contexts alive at a time
            last, hits = step.steps[0], step.hits
            if as_json:
                row = {"step": last.index, "kept": last.context.kept, "items": len(step.items)}
                row.update({f"tokens.{n}": s.context.tokens for n, s in zip(names, step.steps, strict=True)})
                row.update({f"covered.{n}": hit for n, hit in zip(names, hits, strict=True)})
                click.echo(json.dumps(row))
            else:
                tokens = [s.context.tokens for s in step.steps]
                rows.append(_row(recorded.steps[last.index - 1].action, last, tokens))
    except (BudgetError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    totals = lockstep.totals
    if not as_json:
        _print(path, recorded.format, len(recorded.steps), names, rows, totals, last if explain else None)


def _row(action: str, record: ReplayStep, tokens: list[int]) -> tuple[Node, list[str]]:
    """The node (its label may change later: superseded) and the step's other cells, already final."""
    node = record.node
    cells = [",".join(map(str, node.parent_ids)), _ranges(record.context.kept), *[f"{t:,}" for t in tokens]]
    return node, [str(record.index), (action.splitlines() or [""])[0][:48], *cells]


def _print(
    path: Path,
    format_name: str,
    length: int,
    names: list[str],
    rows: list[tuple[Node, list[str]]],
    totals: dict[str, Totals],
    explained: ReplayStep | None,
) -> None:
    console = Console(highlight=False, width=max(Console().width, 132))
    table = Table(title=f"{path.name}: {length} steps ({format_name}); context tokens per strategy")
    table.add_column("step", justify="right")
    table.add_column("action", no_wrap=True, overflow="ellipsis", max_width=34)
    table.add_column("status", no_wrap=True)
    table.add_column("parents", no_wrap=True)
    table.add_column(f"full in {names[0]}", overflow="fold", max_width=22)
    for name in names:
        table.add_column(name, justify="right", no_wrap=True)
    for node, (index, action, *cells) in rows:  # labels as they stand at the end of the run
        table.add_row(index, action, STATUS_MARK.get(node.validation_status.value, ""), *cells)
    console.print(table)
    if explained is not None:
        for decision in explained.context.decisions:
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
    for name, total in totals.items():
        recall = f"{total.hits / total.items:.3f}" if total.items else "n/a"
        mean = total.tokens / total.steps if total.steps else 0
        cost = total.meter.cost()
        summary.add_row(
            name,
            f"{mean:,.0f}",
            f"{total.max_tokens:,}",
            recall,
            str(total.items),
            f"{cost.cache_share:.2f}",
            f"{cost.billed['anthropic']:.2f}",
            f"{cost.billed['openai']:.2f}",
        )
    console.print(summary)
    console.print(
        f"billed: input at prompt-cache prices ({PRICES_TAKEN}) over the full history without a cache"
    )
