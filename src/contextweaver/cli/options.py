"""Options several commands share, defined once: `--config` (its YAML checked as it is parsed),
`-s/--strategy`, `--input-format` and `--instance`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
import yaml

from contextweaver.config import yaml_problem
from contextweaver.strategies import ALIASES, LISTED_ALIASES, TABLE, choices_text

if TYPE_CHECKING:
    from contextweaver.formats.base import Trajectory

F = TypeVar("F", bound=Callable[..., Any])


class BadArgument(click.ClickException):
    """A setting or argument that cannot be used (`-c`, `--config`, `serve --upstream`): exit 2, as click's
    usage errors, the message on one line without the usage."""

    exit_code = 2


class ConfigFile(click.Path):
    """A readable YAML file of settings; one that does not parse fails here, naming the line."""

    name = "yaml"

    def __init__(self) -> None:
        super().__init__(exists=True, dir_okay=False, readable=True, path_type=str)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        path = str(super().convert(value, param, ctx))
        try:
            yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            self.fail(yaml_problem(str(path), exc), param, ctx)
        except UnicodeDecodeError:
            self.fail(f"{path} is not a text file (not UTF-8): give a YAML file of settings", param, ctx)
        return path


class TokenBudget(click.ParamType):
    """A token budget as people write one: 8000, 8_000, 8k or 8K; at least `least`."""

    name = "tokens"

    def __init__(self, least: int = 0) -> None:
        self.least = least

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        from contextweaver.tokens import token_count

        try:
            count = token_count(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)
        if count < self.least:
            self.fail(
                f"{count} is not a token budget: give at least {self.least} token(s), e.g. 8k", param, ctx
            )
        return count


def config_option(help: str = "YAML settings (WeaverConfig fields, e.g. window: 5).") -> Callable[[F], F]:
    return click.option("--config", "config_path", type=ConfigFile(), default=None, help=help)


def strategy_option(default: str) -> Callable[[F], F]:
    """`-s/--strategy`, comma-separated or repeated; `default` says what runs without it."""
    return click.option(
        "--strategy",
        "-s",
        "strategies",
        multiple=True,
        help=f"Strategies, comma-separated or repeated (default: {default}). {choices_text()}; all: every one.",
    )


def chosen_strategies(values: Sequence[str], default: Sequence[str]) -> list[str]:
    """The names `-s` gave (aliases resolved, `all` expanded, order kept), else `default`; an unknown
    name is a usage error that lists the valid ones."""
    names = [ALIASES.get(p, p) for v in values for p in (s.strip() for s in v.split(",")) if p]
    if not names:
        return list(default)
    if "all" in names:
        return list(TABLE)
    unknown = [n for n in names if n not in TABLE]
    if unknown:
        raise click.BadParameter(
            f"unknown {', '.join(unknown)}; valid: {', '.join([*TABLE, *LISTED_ALIASES])}, all "
            "(`contextweaver strategies` describes each)",
            param_hint="--strategy",
        )
    return list(dict.fromkeys(names))


def input_format_option() -> Callable[[F], F]:
    from contextweaver.formats import FORMATS

    return click.option(
        "--input-format",
        default=None,
        type=click.Choice(FORMATS.names()),
        help="Read the run as this format (default: detect it).",
    )


def instance_option(what: str = "read") -> Callable[[F], F]:
    return click.option(
        "--instance",
        default=None,
        help=f"Run to {what} when the file holds several (id or 0-based index; PATH#id also works).",
    )


def require_task(path: str | Path, trajectory: Trajectory, input_format: str | None = None) -> None:
    """A run read with no system prompt or task (the wrong --input-format, a file of steps only) is a
    message naming the file and the fix, not the library's "no root messages"."""
    if trajectory.root:
        return
    if input_format:
        fix = "it is probably not that format: drop --input-format to detect it"
    else:
        fix = (
            'give the whole run (ContextWeaver JSON Lines start with a {"system": ..., "task": ...} line)'
            if trajectory.format == "jsonl"
            else "give the whole run: its first messages are the system prompt and the task"
        )
    raise click.ClickException(
        f"{path}, read as {input_format or trajectory.format}, has no system prompt or task: {fix}"
    )
