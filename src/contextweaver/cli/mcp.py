"""`contextweaver mcp`: recall, expand and status for an agent CLI, over stdio (the `mcp` extra).

claude mcp add contextweaver -- contextweaver mcp          # the newest transcript of this project
contextweaver mcp --store sessions.db [--session ID]      # a stored session (the newest)
contextweaver mcp --url http://127.0.0.1:8787/contextweaver/recall/CAP/   # a proxy session
"""

from __future__ import annotations

from pathlib import Path

import click

from contextweaver.integrations.recall_memory import Memory


@click.command(
    "mcp",
    help="Recall, expand and status for an agent CLI, over stdio (the `mcp` extra).\n\n\b\n"
    + "\n".join(__doc__.splitlines()[2:5]),
)
@click.option("--store", help="a session store (SQLite file or postgresql:// DSN): --session, or its newest")
@click.option("--session", "session_id",
              help="the id of the stored session to answer from (default: the newest at the first call)")  # fmt: skip
@click.option("--url", help="a proxy session's recall capability URL (its note gives it)")
@click.option("--transcript", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="a Claude Code or Codex transcript (default: the newest of --project)")  # fmt: skip
@click.option("--project", type=click.Path(file_okay=False, path_type=Path), default=".",
              show_default=True, help="where the agent CLI runs: its newest transcript is read")  # fmt: skip
@click.option("--agent", type=click.Choice(["any", "claude", "codex"]), default="any", show_default=True,
              help="whose transcripts --project looks for")  # fmt: skip
def command(
    store: str | None,
    session_id: str | None,
    url: str | None,
    transcript: Path | None,
    project: Path,
    agent: str,
) -> None:
    from contextweaver.integrations.mcp_server import server

    server(memory_of(store, session_id, url, transcript, project, agent)).run("stdio")


def memory_of(
    store: str | None,
    session_id: str | None,
    url: str | None,
    transcript: Path | None,
    project: Path,
    agent: str,
) -> Memory:
    """The one memory the options bind the server to (checked before the server starts)."""
    from contextweaver.integrations import recall_memory as memory

    if sum(x is not None for x in (store or session_id, url, transcript)) > 1:
        raise click.UsageError("give one of --store/--session, --url and --transcript")
    if store or session_id:
        if not store:
            raise click.UsageError("--session needs --store")
        return memory.StoreMemory(store, session_id) if session_id else memory.LazyStore(store)
    if url:
        return memory.ProxyMemory(url)
    return memory.LazyTranscript(transcript, project, agent)
