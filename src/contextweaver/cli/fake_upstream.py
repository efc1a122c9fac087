"""`contextweaver fake-upstream`: a deterministic model endpoint, to try a setup without a key or a bill."""

from __future__ import annotations

import contextlib

import click


@click.command("fake-upstream")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option(
    "--port", default=8401, show_default=True, type=click.IntRange(0, 65535), help="TCP port (0: any free)."
)
def command(host: str, port: int) -> None:
    """Answer the OpenAI chat, Responses and Anthropic Messages wires deterministically: a tool call when the
    request offers tools (the next of a short plan, or the recall a working-state note offers), text otherwise.

    Point a proxy at it: `contextweaver serve --upstream http://127.0.0.1:8401/v1`."""
    from contextweaver.testing.fake_upstream import fake_upstream

    try:
        server = fake_upstream(port, host)
    except OSError as exc:
        raise click.ClickException(
            f"cannot listen on {host}:{port} ({exc.strerror or exc}): give another --port"
        ) from exc
    click.echo(f"fake upstream on {server.base_url} (OpenAI chat and Responses: base_url {server.base_url}; "
               f"Anthropic: {server.url}); Ctrl-C stops it", err=True)  # fmt: skip
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
