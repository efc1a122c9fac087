"""`contextweaver examples`: the example scripts the package ships, listed with what each needs, or
copied into a folder to read and change. Each runs as `python -m contextweaver.examples.NAME`.

contextweaver examples list
contextweaver examples copy my-examples && python my-examples/library.py
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path

import click


@click.group("examples")
def command() -> None:
    """The example scripts the package ships: offline, no key, on the package's deterministic fakes."""


@command.command("list")
def list_examples() -> None:
    """Each example, what it shows, what it needs, and whether it can run here."""
    from contextweaver.examples import SCRIPTS, needs

    width = max(map(len, SCRIPTS))
    for name, script in SCRIPTS.items():
        wants = ", ".join([f"[{script.extra}]"] if script.extra else []) or "nothing more"
        wants += "".join(f", {m}" for m in script.modules)
        problem = needs(name)
        click.echo(
            f"{name:<{width}}  {script.shows}; needs {wants}{'' if problem is None else ' (missing here)'}"
        )
    click.echo(
        "\nrun one: python -m contextweaver.examples.NAME; write them out: contextweaver examples copy DIR"
    )


@command.command("copy")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Overwrite example files already in FOLDER.")
def copy(folder: Path, force: bool) -> None:
    """Write every example script into FOLDER (made if absent); each runs there as `python FOLDER/NAME.py`."""
    from contextweaver.cli.options import BadArgument
    from contextweaver.examples import HELPERS, SCRIPTS

    sources = importlib.resources.files("contextweaver.examples")
    names = [f"{name}.py" for name in (*SCRIPTS, *HELPERS)]
    present = [name for name in names if (folder / name).exists()]
    if present and not force:
        raise BadArgument(
            f"{folder} already holds {', '.join(present)}: give another folder, or --force to overwrite"
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name in names:
            (folder / name).write_text(sources.joinpath(name).read_text(encoding="utf-8"), encoding="utf-8")
    except OSError as exc:
        raise BadArgument(f"cannot write the examples into {folder}: {exc.strerror or exc}") from None
    click.echo(f"wrote {len(names)} scripts into {folder}; run one: python {folder / 'library.py'}")
