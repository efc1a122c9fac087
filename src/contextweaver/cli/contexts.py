"""`contextweaver contexts RUN.traj.json`: the contexts an integration sent to the model, rebuilt in full.

The agent's trajectory holds the full history; `<name>.contexts.jsonl` beside it holds each context as
references to those messages plus what was cut. Without `--query`: one line per model query (tokens,
steps kept / compressed / dropped). With `--query N`: that context's messages, exactly as sent.
"""

from __future__ import annotations

import json
from pathlib import Path

import click


@click.command(name="contexts")
@click.argument("trajectory", type=click.Path(exists=True, dir_okay=False))
@click.option("--query", "-q", type=int, default=None, help="Print the messages of this query (1-based).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (one rebuilt context per line).")
def command(trajectory: str, query: int | None, as_json: bool) -> None:
    """Show the woven contexts saved beside a trajectory, rebuilt from the trajectory itself."""
    from contextweaver.integrations.contexts import read_contexts
    from contextweaver.integrations.record import sidecar_paths

    path = Path(trajectory)
    contexts_path = sidecar_paths(path)[1]
    if not contexts_path.exists():
        raise click.ClickException(f"{contexts_path} not found: was this run made with ContextWeaverAgent?")
    document = json.loads(path.read_text(encoding="utf-8"))
    messages = document.get("messages") if isinstance(document, dict) else None
    if not isinstance(messages, list):
        raise click.ClickException(f"{path}: no 'messages' list; pass the trajectory the contexts belong to")
    found = False
    for context in read_contexts(contexts_path, messages):
        if query is not None and context["query"] != query:
            continue
        found = True
        if as_json:
            click.echo(json.dumps(context, ensure_ascii=False))
        elif query is not None:
            click.echo(json.dumps(context["messages"], indent=1, ensure_ascii=False))
        else:
            modes = [d["mode"] for d in context["decisions"]]
            click.echo(
                f"query {context['query']}: {context['tokens']} tokens of {context['full_history_tokens']}, "
                f"{len(context['messages'])} messages; steps full {modes.count('full')}, "
                f"trimmed {modes.count('trimmed')}, compressed {modes.count('compressed')}, "
                f"dropped {modes.count('dropped')}"
            )
    if query is not None and not found:
        raise click.ClickException(f"no query {query} in {contexts_path}")
