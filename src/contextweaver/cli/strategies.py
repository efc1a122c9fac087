"""`contextweaver strategies`: every strategy name, grouped as the table groups it, with what it does."""

from __future__ import annotations

import click

from contextweaver.strategies import ALIASES, GROUPS, LISTED_ALIASES, TABLE, names_in


@click.command("strategies")
def command() -> None:
    """List the strategy names replay, eval, the integrations and the proxy accept, by group."""
    width = max(len(name) for name in TABLE)
    for group, heading in GROUPS.items():
        click.echo(f"{heading}:")
        for name in names_in(group):
            click.echo(f"  {name:<{width}}  {TABLE[name].description}")
        click.echo()
    aliases = ", ".join(f"{alias} = {ALIASES[alias]}" for alias in LISTED_ALIASES)
    click.echo(f"aliases: {aliases}. The default is cw.")
