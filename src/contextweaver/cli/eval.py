"""`contextweaver eval`: replay recorded trajectories through strategies at several budgets; write a report.

contextweaver eval ../shared/data/trajectories/mini-swe-agent --budget 4000,8000,16000,half,none --out eval-out
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from contextweaver.cli.options import chosen_strategies, strategy_option
from contextweaver.strategies import EVAL_CANDIDATES, TABLE, eval_default, needs_model

if TYPE_CHECKING:
    from rich.console import Console

    from contextweaver.config import ModelConfig
    from contextweaver.eval.runner import RunSettings, Unit
    from contextweaver.formats.base import Trajectory


@click.command("eval")
@click.argument("inputs", nargs=-1, required=True, type=click.Path(exists=True))
@strategy_option(
    f"{','.join(eval_default(real_model=False))}; with --memory naming a real model also "
    f"{','.join(n for n in EVAL_CANDIDATES if needs_model(n))}"
)
@click.option(
    "--budget",
    "-b",
    "budgets",
    default="4000,8000,16000,none",
    show_default=True,
    help="Token budgets; half = each run at half its full history's tokens (its own scale, at least what "
    "its system prompt and task need); none = unbounded.",
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
@click.option(
    "--workers", "-j", default=None, type=click.IntRange(min=1), help="Worker processes (default: CPU count)."
)
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
    help="ContextWeaver setting for cw and the cw-* strategies, key=value (repeatable).",
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
@click.option(
    "--wide", is_flag=True, help="Every column of the table (~240 characters; the default fits the terminal)."
)
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
    wide: bool,
) -> None:
    """Evaluate context strategies on recorded trajectories (files or directories) and write a report."""
    from rich.console import Console

    console = Console(stderr=True, soft_wrap=True)
    budget_list = _budgets(budgets)
    seed_list = _seeds(seeds)
    settings, names = _settings(budget_list, overrides, memory, strategies, console)
    trajectories, unreadable = _trajectories(inputs, split)
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
    }
    unread = len(unreadable) * len(names) * len(seed_list)
    _report(results, meta, settings, out, wide, console, (total, computed, unread), started)


def _budgets(budgets: str) -> list[Any]:
    """`--budget` read: token counts (8k, 8_000), half or none; 0 is refused."""
    from contextweaver.eval.trajectory_run import parse_budgets

    try:
        budget_list = parse_budgets(",".join(map(_as_digits, budgets.split(","))))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--budget") from None
    if 0 in budget_list:
        raise click.BadParameter(
            "0 is not a token budget: give positive token counts, e.g. -b 4000,8000,none",
            param_hint="--budget",
        )
    return budget_list


def _settings(
    budget_list: list[Any],
    overrides: tuple[str, ...],
    memory: tuple[str, ...],
    strategies: tuple[str, ...],
    console: Any,
) -> tuple[Any, list[str]]:
    """The run's settings and strategies, every ContextWeaver setting checked now (not inside a worker); a
    strategy that calls a memory model while none is configured is said to run on the offline fake."""
    from contextweaver.eval.runner import RunSettings
    from contextweaver.strategies import cw_settings, weaver_config

    try:
        settings = RunSettings(budget_list, list(overrides), _memory_model(memory))
        real_model = settings.model_config is not None and settings.model_config.backend != "fake"
        names = chosen_strategies(strategies, eval_default(real_model))
        for name in names:
            if TABLE[name].baseline is None:
                weaver_config(name, cw_settings(settings.overrides))
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    on_the_fake = [
        name for name in names if not real_model and needs_model(name, cw_settings(settings.overrides))
    ]
    if on_the_fake:
        console.print(
            f"note: {', '.join(on_the_fake)} call a memory model and none is configured (--memory backend=openai "
            "model=... base_url=...): the offline fake answers, so their summaries and LLM columns are the fake's",
            highlight=False,
        )
    return settings, names


def _trajectories(inputs: tuple[str, ...], split: str) -> tuple[list[Any], dict[str, str]]:
    """The runs of `inputs` in `split` and the inputs that could not be read (by path, why); an input that
    holds no run, or no run of the split, is refused."""
    from contextweaver.cli.runs import RunError, empty_inputs, no_runs, warn
    from contextweaver.eval.runner import discover
    from contextweaver.eval.splits import split_of
    from contextweaver.eval.trajectory_run import trajectory_id

    unreadable: dict[str, str] = {}
    trajectories = discover(inputs, unreadable)
    warn(t for _, t in trajectories)
    empty = empty_inputs(inputs, [*(p for p, _ in trajectories), *unreadable])
    if empty:
        raise RunError(no_runs(empty))
    if split != "all":
        trajectories = [(p, t) for p, t in trajectories if split_of(trajectory_id(t, p)) == split]
    if not trajectories and not unreadable:
        raise RunError(no_runs(inputs, split))
    return trajectories, unreadable


def _report(
    results: list[Any],
    meta: dict[str, Any],
    settings: Any,
    out: str,
    wide: bool,
    console: Any,
    counts: tuple[int, int, int],
    started: float,
) -> None:
    """Write the report, print it and the run counts (`counts`: runs in all, computed, unreadable); the exit
    status says when nothing was measured or a run failed."""
    from rich.console import Console

    from contextweaver.config import ModelConfig
    from contextweaver.eval import report
    from contextweaver.eval.refused import refused_lines
    from contextweaver.eval.runner import failed

    meta["tokens"] = "o200k_base tokens of the woven messages (content + 4 framing tokens per message)"
    meta["memory model"] = (settings.model_config or ModelConfig()).backend
    refused = refused_lines(results)
    if refused:
        meta["refused"] = "; ".join(refused)
    built = report.build(results, meta)
    paths = report.write(built, out)
    report.print_report(built, Console(), wide=wide)  # the terminal's width (COLUMNS; 80 when piped)
    total, computed, unread = counts
    reused = total - computed - unread
    broke = sum(1 for r in results if failed(r))  # failures are never stored, so never reused
    console.print(
        f"{computed - (broke - unread)} run(s) computed, {reused} reused, {broke} failed, "
        f"{time.perf_counter() - started:.1f}s; report: {paths['html']}",
        highlight=False,
    )
    for line in refused:
        console.print(line, highlight=False)
    if refused and not built.rows:
        console.print("nothing measured: every run was refused at every budget; give a budget named above")
        raise SystemExit(1)
    if built.failures:  # the report is written; the exit status tells scripts that it is incomplete
        raise SystemExit(1)


def _as_digits(part: str) -> str:
    """One budget of `--budget` with its token count as digits (8_000 and 8K read as 8000, as elsewhere)."""
    from contextweaver.tokens import token_count

    try:
        return str(token_count(part))
    except ValueError:
        return part  # half, none, or a mistake parse_budgets names


def _memory_model(memory: tuple[str, ...]) -> ModelConfig | None:
    """The `--memory key=value` settings, a bad one said in one line naming the valid keys."""
    from pydantic import ValidationError

    from contextweaver.config import ModelConfig, apply_overrides
    from contextweaver.config.problems import described

    if not memory:
        return None
    try:
        return ModelConfig.model_validate(apply_overrides({"backend": "fake"}, list(memory)))
    except ValidationError as exc:
        raise click.BadParameter(described(exc, ModelConfig), param_hint="--memory") from None


def _seeds(text: str) -> list[int]:
    try:
        return [int(s) for s in text.split(",") if s.strip()] or [0]
    except ValueError:
        raise click.BadParameter(
            f"{text!r} is not a list of seeds: give integers, e.g. --seeds 0,1,2", param_hint="--seeds"
        ) from None


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
