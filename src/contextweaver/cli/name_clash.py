"""PyPI's `contextweaver` is another project (an MCP context firewall) that installs the same import package
`contextweaver/` and a `contextweaver` command; this project is distributed as `contextweaver-agents`. Pip
lets both into one environment, each overwriting the other's shared files (`config.py`, `types.py`, ...),
so the command says so at start instead of failing later on an import that makes no sense."""

from __future__ import annotations

import importlib.metadata

from contextweaver.extras import DISTRIBUTION, install_command

OTHER_DISTRIBUTION = "contextweaver"
# An install of this project from before the rename is a `contextweaver` distribution too: its summary is ours.
OUR_SUMMARY = "Dependency-structured context management for tool-using LLM agents"


def other_project() -> str | None:
    """'NAME VERSION (summary)' of the other `contextweaver` when it is installed in this Python, else None."""
    for dist in importlib.metadata.distributions(name=OTHER_DISTRIBUTION):
        summary = (dist.metadata.get_all("Summary") or [""])[0]  # absent in a bare METADATA
        if summary != OUR_SUMMARY:
            return f"{dist.metadata['Name']} {dist.version} ({summary or 'no summary'})"
    return None


def clash_message() -> str | None:
    """What to do when the other project shares this environment; None when it does not."""
    other = other_project()
    if other is None:
        return None
    return (
        f"warning: PyPI's {other} is installed in this Python too. It is another project that installs the "
        f"same import package `contextweaver` and the same `contextweaver` command, so one of the two "
        f"overwrote the other's files. Give each its own virtual environment; here run "
        f"`pip uninstall -y {OTHER_DISTRIBUTION} {DISTRIBUTION}`, then {install_command('minisweagent')} "
        f"(with the extras you use in the brackets)."
    )
