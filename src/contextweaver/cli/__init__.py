"""The `contextweaver` command: a thin layer; each subcommand lives in its own module, imported lazily."""

from __future__ import annotations

import copy
import importlib
import importlib.util
from collections.abc import Callable
from typing import Any

import click

from contextweaver.cli.name_clash import clash_message
from contextweaver.extras import EXTRAS, command_needs, extra_of, needs_message

try:
    from contextweaver import __version__
except ImportError:  # another project's `contextweaver/__init__.py` replaced ours (see name_clash)
    __version__ = "unknown"

COMMANDS = {
    "replay": "contextweaver.cli.replay",
    "tests": "contextweaver.cli.tests",
    "graph": "contextweaver.cli.graph",
    "eval": "contextweaver.cli.eval",
    "serve": "contextweaver.cli.serve",
    "sessions": "contextweaver.cli.sessions",
    "contexts": "contextweaver.cli.contexts",
    "fit": "contextweaver.cli.fit",
    "strategies": "contextweaver.cli.strategies",
    "examples": "contextweaver.cli.examples",
    "mcp": "contextweaver.cli.mcp",
    "demo": "contextweaver.cli.demo",
    "fake-upstream": "contextweaver.cli.fake_upstream",
}


class MissingExtra(click.ClickException):
    """An optional dependency is not installed: one line naming the extra and the install command."""

    exit_code = 2


def _refuse(what: str, extra: str) -> Callable[..., Any]:
    def refuse(**_: Any) -> None:
        raise MissingExtra(needs_message(what, extra))

    return refuse


class LazyGroup(click.Group):
    """Imports a subcommand's module only when that subcommand runs (keeps `--help` fast). A command
    whose extra is missing still shows its `--help`; run, it says which extra to install (`extras.py`)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name in COMMANDS if importlib.util.find_spec(COMMANDS[name]) is not None)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS or importlib.util.find_spec(COMMANDS[cmd_name]) is None:
            return None
        command: click.Command = importlib.import_module(COMMANDS[cmd_name]).command
        extra = command_needs(cmd_name)
        if extra is None:
            return command
        refusing = copy.copy(command)  # the module's command stays as it is (tests invoke it directly)
        refusing.callback = _refuse(f"contextweaver {cmd_name}", extra)
        return refusing

    def invoke(self, ctx: click.Context) -> object:
        """Says first when PyPI's other `contextweaver` shares this Python; an import that then fails is
        that clash, said in one line, not a traceback."""
        clash = clash_message()
        if clash is None:
            return self._invoke(ctx)
        click.echo(clash, err=True)
        try:
            return self._invoke(ctx)
        except ImportError as exc:
            raise click.ClickException(
                f"{exc}: the other project's files replaced this one's (see above)"
            ) from exc

    def _invoke(self, ctx: click.Context) -> object:
        """The package's own errors (a store that cannot be opened, a missing session) end in their message,
        which says what to do, not in a traceback (a run that does not read exits 2, as a bad argument); so does a YAML file that does not parse (a command
        whose `--config` is `options.config_option` names the file and fails earlier, as a usage error)."""
        import yaml

        from contextweaver.cli.options import BadArgument
        from contextweaver.cli.runs import RunError
        from contextweaver.config import yaml_problem
        from contextweaver.errors import ConfigError, ContextWeaverError
        from contextweaver.formats import TrajectoryError

        try:
            return super().invoke(ctx)
        except TrajectoryError as exc:  # an input that gives no run: a bad argument
            raise RunError(str(exc)) from exc
        except ConfigError as exc:
            raise BadArgument(str(exc)) from exc
        except ContextWeaverError as exc:
            raise click.ClickException(str(exc)) from exc
        except (
            ModuleNotFoundError
        ) as exc:  # an option reached an optional part (-s bm25, a postgresql:// store)
            extra = extra_of(exc.name)
            if extra is None:
                raise
            raise MissingExtra(
                needs_message(f"contextweaver {ctx.invoked_subcommand or ''}".strip(), extra)
            ) from exc
        except yaml.YAMLError as exc:
            raise click.ClickException(yaml_problem("the --config file", exc)) from exc


def _extras_epilog() -> str:
    """Which command needs which extra, from the one table (`extras.py`)."""
    needs = [f"`{c}` the '{name}' extra" for name, extra in EXTRAS.items() for c in extra.commands]
    return f"Optional parts: {', '.join(needs)}; every --help works without them."


@click.group(cls=LazyGroup, invoke_without_command=True, epilog=_extras_epilog())
@click.version_option(
    version=__version__, package_name="contextweaver-agents"
)  # read in place: runs from a clone too
@click.pass_context
def main(ctx: click.Context) -> None:
    """ContextWeaver: dependency-structured context for tool-using LLM agents.

    Installed as `contextweaver-agents`; the command is `contextweaver`, `contextweaver-agents` or
    `python -m contextweaver`."""
    if ctx.invoked_subcommand is None:  # no command: the help, as a successful answer
        click.echo(ctx.get_help())
