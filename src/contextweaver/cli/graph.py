"""`contextweaver graph FILE --out DIR`: build the dependency graph of a recorded run and draw it.

Writes DOT, Mermaid and a self-contained HTML viewer (and SVG when Graphviz's `dot` is on PATH),
coloured by the context a ContextWeaver strategy (`cw` unless `-s` names another) would weave before
the run's next step; the title names the strategy and the budget.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import click

from contextweaver.cli.options import (
    BadArgument,
    TokenBudget,
    config_option,
    input_format_option,
    instance_option,
)

WRITERS = {"dot": ".dot", "mermaid": ".mmd", "html": ".html"}


def _stem(name: str, instance: str | None) -> str:
    """Output file stem: the input name without trajectory extensions, plus the run id if chosen."""
    base, _, selected = name.partition("#")
    for suffix in (".jsonl", ".json", ".traj"):
        base = base.removesuffix(suffix)
    run = instance or selected
    return base + (f"-{re.sub(r'[^A-Za-z0-9_.-]+', '_', run)}" if run else "")


@click.command(name="graph")
@click.argument("path")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default=".",
    show_default=True,
    help="Output folder.",
)
@click.option(
    "--format",
    "formats",
    default="dot,mermaid,html",
    show_default=True,
    help="Comma-separated: dot, mermaid, html.",
)
@input_format_option()
@instance_option("draw")
@click.option(
    "--strategy",
    "-s",
    "strategy",
    default="cw",
    show_default=True,
    help="The ContextWeaver strategy whose context colours the graph: cw, cw-select, cw-paper "
    "(`contextweaver strategies` lists the research ones). With no --budget, cw keeps every step whole.",
)
@click.option(
    "--budget",
    type=TokenBudget(),
    default=None,
    help="Token budget of the context used for colouring (8000, 8k).",
)
@config_option()
@click.option("-c", "overrides", multiple=True, help="Config override key=value (repeatable).")
def command(
    path: str,
    out_dir: str,
    formats: str,
    input_format: str | None,
    instance: str | None,
    strategy: str,
    budget: int | None,
    config_path: str | None,
    overrides: tuple[str, ...],
) -> None:
    """Draw the dependency graph of the recorded run in PATH (PATH#id selects a run of a multi-run file)."""
    from contextweaver.cli.runs import read_run
    from contextweaver.config import load_config
    from contextweaver.errors import ContextWeaverError
    from contextweaver.export import graph_view, to_dot, to_html, to_mermaid
    from contextweaver.strategies import ALIASES, spec, weaver_config
    from contextweaver.weaver import ContextWeaver
    from contextweaver.weaving.budget import BudgetError

    chosen = [f.strip() for f in formats.split(",") if f.strip()]
    unknown = sorted(set(chosen) - set(WRITERS))
    if unknown or not chosen:
        raise click.BadParameter(
            f"unknown format(s) {', '.join(unknown) or '(none)'}; valid: {', '.join(WRITERS)}",
            param_hint="--format",
        )
    trajectory = read_run(path, input_format, instance)
    try:
        config = load_config(config_path, list(overrides))
    except ValueError as exc:
        raise BadArgument(str(exc)) from None

    name = ALIASES.get(strategy, strategy)
    try:
        if spec(name).baseline is not None:
            raise click.BadParameter(
                f"{name} is a baseline: give a ContextWeaver strategy", param_hint="--strategy"
            )
        config = weaver_config(name, config.model_dump(include=config.model_fields_set))  # the user's on top
    except ContextWeaverError as exc:
        raise click.BadParameter(str(exc), param_hint="--strategy") from None
    weaver = ContextWeaver(config=config)
    weaver.begin(trajectory.root)
    for step in trajectory.steps:
        weaver.add_step(step)
    try:
        context = weaver.context(max_tokens=budget) if trajectory.steps else None
    except BudgetError as exc:
        raise click.BadParameter(str(exc), param_hint="--budget") from None
    file_name = Path(path).name
    under = f"budget {budget:,}" if budget is not None else "no budget"
    title = f"{file_name} ({trajectory.format}, {len(trajectory.steps)} steps), coloured by {name}'s context, {under}"
    view = graph_view(weaver.graph, context, title=title)
    render = {"dot": to_dot, "mermaid": to_mermaid, "html": to_html}

    out = Path(out_dir)
    stem = _stem(file_name, instance)
    for fmt in chosen:
        target = out / f"{stem}{WRITERS[fmt]}"
        try:
            out.mkdir(parents=True, exist_ok=True)
            target.write_text(render[fmt](view), encoding="utf-8")
        except OSError as exc:
            raise click.BadParameter(
                f"cannot write {target} ({exc.strerror or exc}): give a folder you can write to, "
                "e.g. --out ./graph",
                param_hint="--out",
            ) from None
        click.echo(f"wrote {target}")
        if fmt == "dot" and shutil.which("dot"):
            svg = target.with_suffix(".svg")
            result = subprocess.run(
                ["dot", "-Tsvg", str(target), "-o", str(svg)], capture_output=True, text=True, timeout=120
            )
            click.echo(
                f"wrote {svg}" if result.returncode == 0 else f"dot failed: {result.stderr.strip()[:300]}"
            )
