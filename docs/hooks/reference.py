"""mkdocs hook: the reference pages are generated from the code, so each default and each option has one
source. A page holding one of these markers gets it replaced when the site is built:

- `<!-- cli-reference -->`: `--help` of `contextweaver` and of every subcommand (nested groups too),
  as the installed command prints it;
- `<!-- config-reference -->`: every `WeaverConfig` setting (nested `lazy.`, `select.`, `memory_model.`),
  and the integrations' settings block, with type, default and description, from the pydantic models;
- `<!-- strategy-table -->`: every strategy name, its aliases and the settings it fixes, from
  `contextweaver.strategies`.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import types
import typing
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

MARKERS = ("<!-- cli-reference -->", "<!-- config-reference -->", "<!-- strategy-table -->")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if "<!-- cli-reference -->" in markdown:
        markdown = markdown.replace("<!-- cli-reference -->", cli_reference())
    if "<!-- config-reference -->" in markdown:
        markdown = markdown.replace("<!-- config-reference -->", config_reference())
    if "<!-- strategy-table -->" in markdown:
        markdown = markdown.replace("<!-- strategy-table -->", strategy_table())
    return markdown


# ------------------------------------------------------------------------------------------------ CLI


def cli_reference() -> str:
    from click.testing import CliRunner

    from contextweaver.cli import main

    runner = CliRunner()
    sections: list[str] = []

    def render(path: list[str], command: Any, level: int) -> None:
        result = runner.invoke(main, [*path, "--help"], prog_name="contextweaver", terminal_width=86)
        if result.exit_code != 0:
            raise RuntimeError(f"contextweaver {' '.join(path)} --help failed:\n{result.output}")
        title = " ".join(["contextweaver", *path])
        sections.append(f"{'#' * level} `{title}`\n\n```text\n{result.output.rstrip()}\n```\n")
        if hasattr(command, "list_commands"):
            import click

            ctx = click.Context(command, info_name=title)
            for name in command.list_commands(ctx):
                render([*path, name], command.get_command(ctx, name), level + 1 if path else 2)

    render([], main, 2)
    return "\n".join(sections)


# ------------------------------------------------------------------------------------- configuration


def attribute_docs(model: type[BaseModel]) -> dict[str, str]:
    """The string literal written under a field (`x: int = 1` then `\"\"\"...\"\"\"`), per field name."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(model)))
    except (OSError, TypeError):
        return {}
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    docs: dict[str, str] = {}
    for node, after in zip(body, body[1:], strict=False):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[node.target.id] = " ".join(after.value.value.split())
    return docs


def type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return " \\| ".join(f"`{value}`" for value in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        return " \\| ".join(type_name(arg) for arg in typing.get_args(annotation))
    if annotation is type(None):
        return "none"
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "").replace("|", "\\|")


def default_of(field: Any) -> str:
    if field.default is PydanticUndefined:
        if field.default_factory is not None:
            made = field.default_factory()
            return "see below" if isinstance(made, BaseModel) else f"`{made!r}`"
        return "required"
    if field.default is None:
        return "none"
    return f"`{field.default!r}`".replace("|", "\\|")


def nested_model(annotation: Any) -> type[BaseModel] | None:
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


NESTED_ELSEWHERE = {"WeaverConfig": "any setting of the `WeaverConfig` table above"}
"""Nested models documented in their own table on the same page: named, not listed again."""
MEANING = {"strategy": "the strategy name (see Which strategy); `contextweaver` is `cw`."}
"""A meaning for a field whose model gives none."""


def model_table(model: type[BaseModel], prefix: str = "") -> tuple[str, list[tuple[str, type[BaseModel]]]]:
    from contextweaver.registry import COMPONENTS

    docs = attribute_docs(model)
    rows = ["| setting | type | default | meaning |", "|---|---|---|---|"]
    nested: list[tuple[str, type[BaseModel]]] = []
    for name, field in model.model_fields.items():
        meaning = field.description or docs.get(name, "") or MEANING.get(name, "")
        if name in COMPONENTS:
            meaning = f"{meaning} One of: {', '.join(f'`{n}`' for n in COMPONENTS[name].names())}.".strip()
        inner = nested_model(field.annotation)
        if (
            inner is not None
            and inner.__name__ in NESTED_ELSEWHERE
            and model.__name__ != inner.__name__
            and prefix == ""
        ):
            meaning = f"{meaning} Takes {NESTED_ELSEWHERE[inner.__name__]}.".strip()
            inner = None
            default = "the defaults"
        else:
            default = default_of(field)
        if inner is not None:
            nested.append((f"{prefix}{name}", inner))
            meaning = f"{meaning} The `{prefix}{name}.` settings below.".strip()
        meaning = meaning.replace("|", "\\|").replace("\n", " ")
        rows.append(f"| `{prefix}{name}` | {type_name(field.annotation)} | {default} | {meaning} |")
    return "\n".join(rows), nested


def config_reference() -> str:
    from contextweaver.config import WeaverConfig
    from contextweaver.integrations.settings import WeavingSettings

    out: list[str] = []
    queue: list[tuple[str, type[BaseModel]]] = [("", WeaverConfig)]
    while queue:
        prefix, model = queue.pop(0)
        heading = f"`{prefix}.*`: {model.__name__}" if prefix else f"`{model.__name__}`"
        doc = " ".join((model.__doc__ or "").split())
        table, nested = model_table(model, f"{prefix}." if prefix else "")
        out.append(f"## {heading}\n\n{doc}\n\n{table}\n")
        queue.extend(nested)
    table, _ = model_table(WeavingSettings)
    doc = " ".join((WeavingSettings.__doc__ or "").split())
    shortcuts = ", ".join(f"`{name}`" for name in _shortcuts())
    out.append(
        "## The integrations' settings block\n\n"
        f"{doc} Every integration takes it (mini-swe-agent's `agent.contextweaver:`, the SWE-agent processor's "
        "entry, the OpenHands condenser's `contextweaver=`, the LangChain middleware's keyword arguments). "
        f"Any `WeaverConfig` setting goes under `weaver:`; {shortcuts} may also be written at the top level.\n\n"
        f"{table}\n"
    )
    return "\n".join(out)


def _shortcuts() -> tuple[str, ...]:
    from contextweaver.integrations import settings

    return tuple(getattr(settings, "SHORTCUTS", ()))


# ------------------------------------------------------------------------------------------- strategies


def strategy_table() -> str:
    from contextweaver import strategies

    aliases: dict[str, list[str]] = {}
    for alias, name in strategies.ALIASES.items():
        aliases.setdefault(name, []).append(alias)
    header = ["| name | what it sends | settings it fixes | also accepted as |", "|---|---|---|---|"]
    groups: dict[str, list[str]] = {}
    for name, spec in strategies.TABLE.items():
        groups.setdefault(str(getattr(spec, "group", "") or ""), []).append(name)
    out: list[str] = []
    for group, names in groups.items():
        if group:
            out.append(f"**{group}**\n")
        out.append("\n".join([*header, *(_strategy_row(n, strategies, aliases) for n in names)]) + "\n")
    return "\n".join(out)


def _strategy_row(name: str, strategies: Any, aliases: dict[str, list[str]]) -> str:
    spec = strategies.TABLE[name]
    if spec.baseline is not None:
        fixed = f"baseline `{spec.baseline}`" + (
            f" (`window` sets its `{spec.window_arg}`)" if spec.window_arg else ""
        )
    else:
        fixed = ", ".join(f"`{k}: {v}`" for k, v in _flat(spec.weaver)) or "the library defaults"
    also = ", ".join(f"`{a}`" for a in aliases.get(name, [])) or ""
    return f"| `{name}` | {spec.description} | {fixed} | {also} |".replace("\n", " ")


def _flat(settings: Any, prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key, value in settings.items():
        if isinstance(value, dict):
            out.extend(_flat(value, f"{prefix}{key}."))
        else:
            out.append((f"{prefix}{key}", "null" if value is None else value))
    return out
