"""`contextweaver serve`: the OpenAI-compatible proxy. Point an agent's base URL at it."""

from __future__ import annotations

import logging

import click

from contextweaver.serve.conversation import FORMATS

LOOPBACK = ("127.0.0.1", "localhost", "::1")


@click.command("serve")
@click.option(
    "--upstream",
    envvar="CONTEXTWEAVER_UPSTREAM",
    required=True,
    help="The real endpoint's OpenAI base URL, with /v1 (e.g. http://127.0.0.1:8080/v1).",
)
@click.option(
    "--store",
    "store_location",
    envvar="CONTEXTWEAVER_STORE",
    default="contextweaver-sessions.db",
    show_default=True,
    help="SQLite file, or a postgresql:// DSN shared by several machines.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind (loopback by default).")
@click.option("--port", default=8400, show_default=True, type=int)
@click.option(
    "--config", "config_path", type=click.Path(exists=True, dir_okay=False), help="Weaver YAML config."
)
@click.option("-c", "overrides", multiple=True, metavar="KEY=VALUE", help="Override a config setting.")
@click.option("--budget", type=int, help="Hard token budget of every woven context.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="auto",
    show_default=True,
    help="How to read the agent's messages: tool calls (openai) or mini-swe-agent's text protocol.",
)
@click.option("--max-body-mb", default=32.0, show_default=True, type=float, help="Largest request body.")
@click.option("--timeout", default=600.0, show_default=True, type=float, help="Seconds to wait for upstream.")
@click.option("--api-key-env", help="Env variable with an upstream key for callers that send none.")
@click.option(
    "--log-level", default="info", show_default=True, type=click.Choice(["debug", "info", "warning", "error"])
)
def command(upstream: str, store_location: str, host: str, port: int, config_path: str | None,
            overrides: tuple[str, ...], budget: int | None, fmt: str, max_body_mb: float, timeout: float,
            api_key_env: str | None, log_level: str) -> None:  # fmt: skip
    """Weave each chat request's history before it reaches the upstream model; answers pass back unchanged."""
    import uvicorn

    from contextweaver.config import load_config
    from contextweaver.serve.app import ProxySettings, create_app
    from contextweaver.serve.build import build_manager

    try:
        config = load_config(config_path, list(overrides))
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s")
    manager = build_manager(store_location, config, budget=budget)
    settings = ProxySettings(
        upstream=upstream, max_body_bytes=int(max_body_mb * 1024 * 1024), timeout=timeout, format=fmt,
        api_key_env=api_key_env,
    )  # fmt: skip
    if host not in LOOPBACK:
        click.echo(f"warning: binding {host}: the proxy (and the upstream key it may hold) is reachable "
                   "from other machines", err=True)  # fmt: skip
    click.echo(
        f"contextweaver proxy on http://{host}:{port}/v1 -> {upstream} (store: {manager.store.url})", err=True
    )
    uvicorn.run(create_app(settings, manager), host=host, port=port, log_level=log_level, access_log=False)
