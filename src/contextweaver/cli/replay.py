"""`contextweaver replay`: feed a recorded run step by step; show what was kept and why, and the tokens.

The strategies are replayed in lockstep and each step is summed up and printed as it is produced (a
table row, or with `--json` a line), so no row is held (only `--wide`, whose columns and statuses are known
at the end, holds its rows). Memory still grows with the run: its steps, and each strategy's graph and
indexes of them (the per-step selection's output index most: `benchmarks/replay_scaling.py`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from contextweaver.cli.options import (
    BadArgument,
    TokenBudget,
    chosen_strategies,
    config_option,
    input_format_option,
    instance_option,
    strategy_option,
)
from contextweaver.cli.replay_view import (
    CompactStream,
    Row,
    StatusLine,
    console_for,
    print_footer,
    print_wide,
    title_of,
)
from contextweaver.cli.runs import read_run
from contextweaver.config import load_config
from contextweaver.eval.kept_runs import KeptRuns
from contextweaver.eval.lockstep import Lockstep
from contextweaver.eval.replay import ReplayStep
from contextweaver.examples import example_path
from contextweaver.formats.base import Trajectory
from contextweaver.formats.discovery import is_archive
from contextweaver.protocols import Strategy
from contextweaver.records import Node
from contextweaver.strategies import REPLAY_DEFAULT, build_strategy, spec
from contextweaver.weaving.budget import BudgetError


def _factory(name: str, settings: dict[str, Any]) -> Callable[[], Strategy]:
    """ContextWeaver names take the user's settings; baselines run at their standard settings."""
    own = settings if spec(name).baseline is None else {}
    return lambda: build_strategy(name, own).strategy


@click.command()
@click.argument("trajectory", required=False, type=click.Path(path_type=Path))
@strategy_option(",".join(REPLAY_DEFAULT))
@input_format_option()
@instance_option("replay")
@click.option(
    "--budget", type=TokenBudget(), default=None, help="hard token budget for every context (8000, 8k)"
)
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
    input_format: str | None,
    instance: str | None,
    budget: int | None,
    config_path: str | None,
    overrides: tuple[str, ...],
    explain: bool,
    wide: bool,
    as_json: bool,
) -> None:
    """Replay TRAJECTORY (default: the example run the package ships) through several strategies.

    Each step's row is printed as it is computed (`--wide` prints its table at the end); on a terminal,
    a progress bar on stderr shows the step being computed."""
    path = trajectory or example_path()
    names = chosen_strategies(strategies, REPLAY_DEFAULT)
    status = StatusLine() if not as_json else None
    recorded, lockstep = _prepared(
        path, names, input_format, instance, budget, config_path, overrides, status
    )
    if status is None:
        with _stepping(status):
            _print_json(lockstep, names)
        return
    title = title_of(path, len(recorded.steps), recorded.format, budget)
    stream = None if wide else CompactStream(console_for(), title, names, len(recorded.steps), _largest(path))
    with _stepping(status):
        last, rows, nodes = _played(lockstep, recorded, status, stream)
    console = console_for()
    if stream is None:
        print_wide(console, title, names, rows)
    print_footer(
        console,
        names,
        lockstep.totals,
        wide=wide,
        budget=budget,
        explained=last if explain else None,
        superseded=[i for i, n in enumerate(nodes, 1) if n.validation_status.value == "superseded"],
    )


def _prepared(
    path: Path,
    names: list[str],
    input_format: str | None,
    instance: str | None,
    budget: int | None,
    config_path: str | None,
    overrides: tuple[str, ...],
    status: StatusLine | None,
) -> tuple[Trajectory, Lockstep]:
    """The run read and its strategies built with the user's settings, a status line shown meanwhile."""
    try:
        if status is not None:
            status.show(f"reading {path}")
        try:
            config = load_config(config_path, list(overrides))
        except ValueError as exc:
            raise BadArgument(str(exc)) from None
        recorded = read_run(path, input_format, instance)
        settings = config.model_dump(include=config.model_fields_set)  # what the user set, not the defaults
        try:
            return recorded, Lockstep(recorded, names, lambda name: _factory(name, settings)(), budget)
        except ValueError as exc:  # a setting a strategy cannot take
            raise click.ClickException(str(exc)) from None
    finally:
        if status is not None:
            status.clear()


@contextmanager
def _stepping(status: StatusLine | None) -> Iterator[None]:
    """While the steps are replayed: a budget that cannot hold a step names `--budget`; the status line
    is cleared however the replay ends."""
    try:
        yield
    except BudgetError as exc:
        raise click.BadParameter(str(exc), param_hint="--budget") from None
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        if status is not None:
            status.clear()


def _print_json(lockstep: Lockstep, names: list[str]) -> None:
    """`--json`: one object per step, printed as it is computed."""
    for step in lockstep:  # one step's contexts alive at a time
        last, hits = step.steps[0], step.hits
        row = {"step": last.index, "kept": last.context.kept, "items": len(step.items)}
        row.update({f"tokens.{n}": s.context.tokens for n, s in zip(names, step.steps, strict=True)})
        row.update({f"covered.{n}": hit for n, hit in zip(names, hits, strict=True)})
        click.echo(json.dumps(row))


def _played(
    lockstep: Lockstep, recorded: Trajectory, status: StatusLine, stream: CompactStream | None
) -> tuple[ReplayStep | None, list[Row], list[Node]]:
    """Each step's row, streamed as it comes (or held for `--wide`, whose widths are known at the end); the
    last step (for `--explain`) and the compact view's nodes (a later test run may supersede their status)."""
    rows: list[Row] = []
    nodes: list[Node] = []
    last: ReplayStep | None = None
    kept = KeptRuns()
    status.steps(0, len(recorded.steps))
    for step in lockstep:  # one step's contexts alive at a time
        last = step.steps[0]
        tokens = [s.context.tokens for s in step.steps]
        shown = Row.of(recorded.steps[last.index - 1].action, last, tokens, kept)
        status.clear()
        if stream is not None:
            stream.row(shown)
            nodes.append(shown.node)
        else:
            rows.append(shown)
        status.steps(last.index, len(recorded.steps))
    return last, rows, nodes


def _largest(path: Path) -> int:
    """A bound on any context's tokens, for the token columns' width: the run file's bytes (a token
    holds at least a character); a folder or archive is taken as large."""
    return path.stat().st_size if path.is_file() and not is_archive(path) else 10**9
