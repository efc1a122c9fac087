"""The `contextweaver` command: a thin layer; each subcommand lives in its own module, imported lazily."""

from __future__ import annotations

import importlib
import importlib.util

import click

from contextweaver.cli.name_clash import clash_message

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
}


class LazyGroup(click.Group):
    """Imports a subcommand's module only when that subcommand runs (keeps `--help` fast)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name in COMMANDS if importlib.util.find_spec(COMMANDS[name]) is not None)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS or importlib.util.find_spec(COMMANDS[cmd_name]) is None:
            return None
        command: click.Command = importlib.import_module(COMMANDS[cmd_name]).command
        return command

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

        from contextweaver.cli.runs import RunError
        from contextweaver.config import yaml_problem
        from contextweaver.errors import ContextWeaverError
        from contextweaver.formats import TrajectoryError

        try:
            return super().invoke(ctx)
        except TrajectoryError as exc:  # an input that gives no run: a bad argument
            raise RunError(str(exc)) from exc
        except ContextWeaverError as exc:
            raise click.ClickException(str(exc)) from exc
        except yaml.YAMLError as exc:
            raise click.ClickException(yaml_problem("the --config file", exc)) from exc


@click.group(cls=LazyGroup)
@click.version_option(
    version=__version__, package_name="contextweaver-agents"
)  # read in place: runs from a clone too
def main() -> None:
    """ContextWeaver: dependency-structured context for tool-using LLM agents.

    Installed as `contextweaver-agents`; the command is `contextweaver` or `contextweaver-agents`."""
