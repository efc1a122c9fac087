"""`contextweaver eval`: replay recorded trajectories through strategies at several budgets; write a report.

contextweaver eval ../shared/data/trajectories/mini-swe-agent --budget 4000,8000,16000,none --out eval-out
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from contextweaver.strategies import ALIASES, EVAL_DEFAULT, TABLE

if TYPE_CHECKING:
    from rich.console import Console

    from contextweaver.eval.runner import RunSettings, Unit
    from contextweaver.formats.base import Trajectory


def _split(values: tuple[str, ...]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


@click.command("eval")
@click.argument("inputs", nargs=-1, required=True, type=click.Path(exists=True))
@click.option(
    "--strategy",
    "-s",
    "strategies",
    multiple=True,
    help=f"Strategies, comma-separated or repeated (default: all but cw-recency). Valid: {', '.join(TABLE)}, all.",
)
@click.option(
    "--budget",
    "-b",
    "budgets",
    default="4000,8000,16000,none",
    show_default=True,
    help="Token budgets; none = unbounded.",
)
@click.option(
    "--out",
    "-o",
    "out",
    default="eval-out",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Results and report directory (reruns reuse finished results).",
)
@click.option("--workers", "-j", default=None, type=int, help="Worker processes (default: CPU count).")
@click.option(
    "--seeds",
    default="0",
    show_default=True,
    help="Seeds, e.g. 0,1,2: extra seeds replay again for the stability columns.",
)
@click.option(
    "-c",
    "overrides",
    multiple=True,
    help="ContextWeaver setting for the cw-* strategies, key=value (repeatable).",
)
@click.option(
    "--memory", "memory", multiple=True, help="Memory-model setting, key=value (default backend: fake)."
)
@click.option(
    "--split",
    type=click.Choice(["all", "train", "validation"]),
    default="all",
    show_default=True,
    help="Only the runs of the fixed train/validation split (contextweaver.eval.splits): tune on train, report validation.",
)
@click.option("--no-progress", is_flag=True, help="No progress bar (for logs).")
def command(
    inputs: tuple[str, ...],
    strategies: tuple[str, ...],
    budgets: str,
    out: str,
    workers: int | None,
    seeds: str,
    overrides: tuple[str, ...],
    memory: tuple[str, ...],
    split: str,
    no_progress: bool,
) -> None:
    """Evaluate context strategies on recorded trajectories (files or directories) and write a report."""
    from rich.console import Console

    from contextweaver.config import ModelConfig, apply_overrides
    from contextweaver.eval import report
    from contextweaver.eval.runner import RunSettings, discover
    from contextweaver.eval.splits import split_of
    from contextweaver.eval.trajectory_run import parse_budgets, trajectory_id
    from contextweaver.strategies import cw_settings, weaver_config

    console = Console(stderr=True, soft_wrap=True)
    names = [ALIASES.get(n, n) for n in _split(strategies)] or list(EVAL_DEFAULT)
    if "all" in names:
        names = list(TABLE)
    unknown = [n for n in names if n not in TABLE]
    if unknown:
        raise click.BadParameter(
            f"unknown {', '.join(unknown)}; valid: {', '.join(TABLE)}", param_hint="--strategy"
        )
    try:
        settings = RunSettings(
            parse_budgets(budgets),
            list(overrides),
            ModelConfig.model_validate(apply_overrides({"backend": "fake"}, list(memory)))
            if memory
            else None,
        )
        for name in names:
            if TABLE[name].baseline is None:
                weaver_config(name, cw_settings(settings.overrides))  # fail now, not inside a worker
        seed_list = [int(s) for s in seeds.split(",") if s.strip()] or [0]
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    unreadable: dict[str, str] = {}
    trajectories = discover(inputs, unreadable)
    if split != "all":
        trajectories = [(p, t) for p, t in trajectories if split_of(trajectory_id(t, p)) == split]
    if not trajectories and not unreadable:
        raise click.UsageError(
            f"no readable trajectories{'' if split == 'all' else f' of split {split}'} in the given paths"
        )
    total = (len(trajectories) + len(unreadable)) * len(names) * len(seed_list)
    workers = workers or os.cpu_count() or 1
    console.print(
        f"{len(trajectories) + len(unreadable)} trajectories x {len(names)} strategies x {len(seed_list)} seed(s) = {total} runs, "
        f"budgets {budgets}, {workers} worker(s), results in {out}",
        highlight=False,
    )
    started = time.perf_counter()
    try:
        results, computed = _run(
            trajectories, unreadable, names, seed_list, settings, out, workers, total, console, no_progress
        )
    except KeyboardInterrupt:
        console.print(f"interrupted: finished runs are kept in {out}; run the same command to resume")
        raise SystemExit(130) from None
    meta = {
        "command": "contextweaver eval " + shlex.join(sys.argv[2:]),
        "trajectories": len(trajectories),
        "strategies": ", ".join(names),
        "budgets": budgets,
        "seeds": ", ".join(map(str, seed_list)),
        "tokens": "o200k_base tokens of the woven messages (content + 4 framing tokens per message)",
        "memory model": (settings.model_config or ModelConfig()).backend,
    }
    built = report.build(results, meta)
    paths = report.write(built, out)
    report.print_report(built, Console(width=None if sys.stdout.isatty() else 240))
    reused = total - computed - len(unreadable) * len(names) * len(seed_list)
    console.print(
        f"{computed} run(s) computed, {reused} reused, {len(built.failures)} failed, "
        f"{time.perf_counter() - started:.1f}s; report: {paths['html']}",
        highlight=False,
    )
    if built.failures:  # the report is written; the exit status tells scripts that it is incomplete
        raise SystemExit(1)


def _run(
    trajectories: Sequence[tuple[str, Trajectory]],
    unreadable: dict[str, str],
    names: Sequence[str],
    seeds: Sequence[int],
    settings: RunSettings,
    out: str,
    workers: int,
    total: int,
    console: Console,
    no_progress: bool,
) -> tuple[list[dict[str, Any]], int]:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from contextweaver.eval.runner import run_grid

    if no_progress:
        return run_grid(trajectories, names, seeds, settings, out, workers=workers, unreadable=unreadable)
    columns = (
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console) as progress:
        task = progress.add_task("replaying", total=total)

        def done(unit: Unit, reused: bool) -> None:
            progress.update(
                task,
                advance=1,
                description=f"{'reused' if reused else 'done'} {unit.strategy} {unit.instance}"[:60],
            )

        return run_grid(
            trajectories, names, seeds, settings, out, workers=workers, on_done=done, unreadable=unreadable
        )
