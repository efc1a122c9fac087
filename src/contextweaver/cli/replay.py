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

from contextweaver.cli.options import (
    chosen_strategies,
    config_option,
    instance_option,
    require_task,
    strategy_option,
)
from contextweaver.cli.replay_view import Row, console_for, print_replay, title_of
from contextweaver.config import load_config
from contextweaver.eval.lockstep import Lockstep
from contextweaver.eval.replay import ReplayStep
from contextweaver.examples import example_path
from contextweaver.formats import TrajectoryError, load_trajectory
from contextweaver.protocols import Strategy
from contextweaver.strategies import REPLAY_DEFAULT, build_strategy, spec
from contextweaver.weaving.budget import BudgetError


def _factory(name: str, settings: dict[str, Any]) -> Callable[[], Strategy]:
    """ContextWeaver names take the user's settings; baselines run at their standard settings."""
    own = settings if spec(name).baseline is None else {}
    return lambda: build_strategy(name, own).strategy


@click.command()
@click.argument("trajectory", required=False, type=click.Path(path_type=Path))
@strategy_option(",".join(REPLAY_DEFAULT))
@instance_option("replay")
@click.option("--budget", type=int, default=None, help="hard token budget for every context")
@config_option()
@click.option("-c", "overrides", multiple=True, help="override a setting: -c window=8")
@click.option(
    "--explain",
    is_flag=True,
    help="why each step is kept, compressed or dropped in the first strategy's last context (cw by default; "
    "-s cw-select,... to explain another)",
)
@click.option(
    "--wide", is_flag=True, help="the full table: status in words, every strategy's tokens (~150 columns)"
)
@click.option("--json", "as_json", is_flag=True, help="machine-readable output, one object per step")
def command(
    trajectory: Path | None,
    strategies: tuple[str, ...],
    instance: str | None,
    budget: int | None,
    config_path: str | None,
    overrides: tuple[str, ...],
    explain: bool,
    wide: bool,
    as_json: bool,
) -> None:
    """Replay TRAJECTORY (default: the example run the package ships) through several strategies."""
    path = trajectory or example_path()
    names = chosen_strategies(strategies, REPLAY_DEFAULT)
    try:
        config = load_config(config_path, list(overrides))
        recorded = load_trajectory(path, instance=instance)
        require_task(path, recorded)
        settings = config.model_dump(include=config.model_fields_set)  # what the user set, not the defaults
        lockstep = Lockstep(recorded, names, lambda name: _factory(name, settings)(), budget)
    except (TrajectoryError, ValueError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    rows: list[Row] = []
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
                rows.append(Row.of(recorded.steps[last.index - 1].action, last, tokens))
    except BudgetError as exc:
        raise click.BadParameter(str(exc), param_hint="--budget") from None
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    if not as_json:
        title = title_of(path, len(recorded.steps), recorded.format, budget)
        print_replay(
            console_for(),
            title,
            names,
            rows,
            lockstep.totals,
            wide=wide,
            budget=budget,
            explained=last if explain else None,
        )
