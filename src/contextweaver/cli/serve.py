"""`contextweaver serve`: the OpenAI-compatible proxy. Point an agent's base URL at it."""

from __future__ import annotations

import errno
import logging
import os
import socket
from typing import Any
from urllib.parse import urlsplit

import click

from contextweaver.cli.options import BadArgument, TokenBudget, config_option
from contextweaver.serve.sessions.session_bytes import DEFAULT_BOUND
from contextweaver.serve.wires.conversation import FORMATS

LOOPBACK = ("127.0.0.1", "localhost", "::1")
WILDCARDS = ("0.0.0.0", "::", "")


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
@click.option("--port", default=8400, show_default=True, type=int, help="TCP port to listen on (1-65535).")
@config_option("Weaver YAML config.")
@click.option("-c", "overrides", multiple=True, metavar="KEY=VALUE", help="Override a config setting.")
@click.option("--budget", type=TokenBudget(), help="Hard token budget of every woven context (8000, 8k).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="auto",
    show_default=True,
    help="How to read the agent's messages: tool calls (openai) or mini-swe-agent's text protocol.",
)
@click.option("--max-body-mb", default=32.0, show_default=True, type=float, help="Largest request body.")
@click.option(
    "--max-in-flight",
    default=64,
    show_default=True,
    type=click.IntRange(min=1),
    help="Requests served at once; more get a 503 with Retry-After.",
)
@click.option(
    "--max-in-flight-mb",
    default=64.0,
    show_default=True,
    type=click.FloatRange(min=1),
    help="Request body bytes held at once, counted as they arrive (one caller: half of it); more get a 503.",
)
@click.option(
    "--body-timeout",
    default=10.0,
    show_default=True,
    type=click.FloatRange(min=0.1),
    help="Seconds any request body may take to arrive, plus --body-seconds-per-mb per MB; slower is a 408.",
)
@click.option(
    "--body-seconds-per-mb",
    default=2.0,
    show_default=True,
    type=click.FloatRange(min=0),
    help="Seconds per MB of a request body added to --body-timeout: its inverse is the slowest upload accepted.",
)
@click.option(
    "--timeout",
    default=600.0,
    show_default=True,
    type=click.FloatRange(min=0.1),
    help="Seconds the upstream has, in total, to answer a request's headers (a non-streamed body too); "
    "a stream may then pause this long between chunks. Past it: 504.",
)
@click.option(
    "--api-key-env",
    help="Env variable with an upstream key lent to callers with the proxy token that send none.",
)
@click.option(
    "--auth-token-env",
    help="Env variable with the proxy's bearer token; required off loopback, and to read sessions over HTTP.",
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME",
    help="Extra Host header value to accept (loopback names always are; '*' accepts any).",
)
@click.option(
    "--weaving-processes",
    default=2,
    show_default=True,
    type=click.IntRange(0, 64),
    help="Worker processes that weave (0: threads of the server process, which a huge output can stall).",
)
@click.option(
    "--session-cache-mb",
    default=DEFAULT_BOUND >> 20,
    show_default=True,
    type=click.IntRange(min=16),
    help="Memory each weaving process (or the proxy itself, with --weaving-processes 0) keeps loaded sessions "
    "in, root and simulations included; least recently used are dropped first, and a session larger than this "
    "is read from the store at each request.",
)
@click.option(
    "--header-timeout",
    default=10.0,
    show_default=True,
    type=click.FloatRange(min=0.1),
    help="Seconds a connection may take to send a request's headers before it is closed.",
)
@click.option(
    "--limit-concurrency",
    default=4096,
    show_default=True,
    type=click.IntRange(min=16),
    help="Connections and requests beyond which the server answers 503 (kept under the file limit).",
)
@click.option(
    "--shutdown-timeout",
    default=30,
    show_default=True,
    type=click.IntRange(min=1),
    help="Seconds shutdown waits for requests and weaves in flight before cancelling them.",
)
@click.option(
    "--prices",
    "prices_path",
    type=click.Path(dir_okay=False),
    help="JSON or YAML price table for /metrics' spend (per million tokens; default: list prices of common "
    "models in USD, estimates). See docs/proxy/observability.md.",
)
@click.option(
    "--log-level", default="info", show_default=True, type=click.Choice(["debug", "info", "warning", "error"])
)
def command(upstream: str, store_location: str, host: str, port: int, config_path: str | None,
            overrides: tuple[str, ...], budget: int | None, fmt: str, max_body_mb: float, max_in_flight: int,
            max_in_flight_mb: float, body_timeout: float, body_seconds_per_mb: float, timeout: float,
            api_key_env: str | None, auth_token_env: str | None, allowed_hosts: tuple[str, ...],
            weaving_processes: int, session_cache_mb: int, header_timeout: float, limit_concurrency: int, shutdown_timeout: int,
            prices_path: str | None, log_level: str) -> None:  # fmt: skip
    """Weave each chat request's history before it reaches the upstream model; answers pass back unchanged."""
    from contextweaver.config import load_config
    from contextweaver.serve.app import ProxySettings, create_app
    from contextweaver.serve.gate.limits import InFlightLimits
    from contextweaver.serve.gate.redact import RedactingFilter, install_log_redaction, redact_text
    from contextweaver.serve.gate.server import ServerLimits, install_repeat_limit, run
    from contextweaver.serve.sessions.build import build_manager
    from contextweaver.serve.sessions.recall import with_proxy_hint
    from contextweaver.serve.sessions.session_bytes import shares

    _check_arguments(upstream, host, port, budget)
    prices = _prices(prices_path)
    token = _token(auth_token_env, host, api_key_env, upstream)
    try:
        config = load_config(config_path, list(overrides))
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    problem = _cannot_listen(host, port)  # the last check: a proxy already there is the likeliest failure
    if problem:
        raise BadArgument(problem)
    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s")
    for handler in logging.getLogger().handlers:
        handler.addFilter(RedactingFilter())
    install_log_redaction()
    install_repeat_limit()
    config = with_proxy_hint(config, host, port)  # the note's recall hint: this proxy's address
    memory = session_cache_mb * 1024 * 1024
    manager = build_manager(store_location, config, budget=budget, cache_bytes=shares(memory)[0])
    settings = ProxySettings(
        upstream=upstream, max_body_bytes=int(max_body_mb * 1024 * 1024), timeout=timeout, format=fmt,
        api_key_env=api_key_env, auth_token=token, allowed_hosts=_hosts(host, allowed_hosts), prices=prices,
        in_flight=InFlightLimits(max_requests=max_in_flight, max_bytes=int(max_in_flight_mb * 1024 * 1024),
                                 body_timeout=body_timeout, body_seconds_per_mb=body_seconds_per_mb),
    )  # fmt: skip
    click.echo(f"contextweaver proxy on http://{host}:{port}/v1 -> {redact_text(upstream)} "
               f"(store: {redact_text(manager.store.url)}; token {'required' if token else 'off'}; "
               f"budget {budget if budget else 'none: the history passes through whole'})\n"
               f"  Claude Code, Anthropic SDKs: ANTHROPIC_BASE_URL=http://{host}:{port} (no /v1)\n"
               f"  OpenAI SDKs, Codex CLI (wire_api = \"responses\"): base_url = http://{host}:{port}/v1\n"
               f"  health: http://{host}:{port}/contextweaver/health (or /health; \"degraded\" while the upstream "
               "cannot be reached)\n"
               f"  dashboard: http://{host}:{port}/contextweaver/dashboard "
               f"({'sign in with the token' if token else 'needs a token: start with --auth-token-env NAME'})",
               err=True)  # fmt: skip
    workers = None
    if weaving_processes:
        from contextweaver.serve.sessions.workers import WeavingProcesses

        workers = WeavingProcesses(store_location, config, budget=budget, processes=weaving_processes,
                                   exit_timeout=min(5.0, shutdown_timeout), memory=memory)  # fmt: skip
    limits = ServerLimits(header_timeout=header_timeout, limit_concurrency=limit_concurrency,
                          graceful_timeout=shutdown_timeout)  # fmt: skip
    run(create_app(settings, manager, workers=workers), host, port, log_level, limits)


def _check_arguments(upstream: str, host: str, port: int, budget: int | None) -> None:
    """Arguments the proxy would start with and then fail every request on (or fail with tracebacks),
    refused now in one line each."""
    from contextweaver.weaving.budget import ROOM_STEPS, TYPICAL_STEP

    if budget is not None and budget < 1:
        raise BadArgument(
            f"--budget {budget} holds no context: a budget holds each request's system prompt, task and newest "
            "step (a request it cannot hold is refused, naming the least budget that would); suggested: the "
            f"system prompt's tokens + {ROOM_STEPS * TYPICAL_STEP:,}, room for about {ROOM_STEPS} typical steps"
        )
    parts = urlsplit(upstream)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        bare = upstream.split("://", 1)[-1].rstrip("/")
        example = f"https://{bare}{'' if bare.endswith('/v1') else '/v1'}"
        raise BadArgument(
            f"--upstream {upstream} is not an http(s) URL: give the endpoint's base URL with its scheme, "
            f"e.g. {example}"
        )
    if not 1 <= port <= 65535:
        raise BadArgument(f"--port {port} is not a TCP port: give one from 1 to 65535 (default 8400)")


def _prices(path: str | None) -> Any:
    """The price table of --prices (the defaults without it), refused in one line when it does not read."""
    from contextweaver.serve.ledger.spend import BadPrices, PriceTable, load_prices

    if path is None:
        return PriceTable()
    try:
        return load_prices(path)
    except BadPrices as exc:
        raise BadArgument(str(exc)) from None


def _cannot_listen(host: str, port: int) -> str | None:
    """Why the proxy could not listen on host:port (in use, no such address), found before it starts."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds
            probe.bind(address)
    except socket.gaierror as exc:
        return f"--host {host}: no such address ({exc.strerror}): give an address or name of this machine"
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            return f"port {port} on {host} is in use (another proxy?): stop it or give another --port"
        return f"cannot listen on {host}:{port} ({exc.strerror or exc}): give another --host or --port"
    return None


def _token(env: str | None, host: str, api_key_env: str | None, upstream: str) -> str | None:
    """The proxy token from its variable; refuses a setup that would expose sessions or the upstream key."""
    from contextweaver.serve.upstream.forward import url_credentials

    if env is None and url_credentials(upstream):
        raise click.UsageError(
            "the --upstream URL carries credentials, which the proxy lends to callers: set --auth-token-env "
            "NAME so only callers holding that token get them"
        )
    if env is None:
        if host not in LOOPBACK:
            raise click.UsageError(
                f"binding {host} exposes every session to other machines: set a token with --auth-token-env NAME"
            )
        if api_key_env is not None:
            raise click.UsageError(
                "--api-key-env lends your upstream key to callers: set --auth-token-env NAME so only callers "
                "holding that token get it"
            )
        return None
    token = os.environ.get(env, "")
    if len(token) < 16:
        raise click.UsageError(
            f"${env} must hold the proxy token, at least 16 characters (it is {len(token)})"
        )
    return token


def _hosts(host: str, extra: tuple[str, ...]) -> frozenset[str] | None:
    """Host header values to accept: loopback names, the bound address and --allowed-host."""
    from contextweaver.serve.gate.guard import LOOPBACK_HOSTS, host_name

    if "*" in extra or (host in WILDCARDS and not extra):
        return None
    return LOOPBACK_HOSTS | {host_name(name) for name in (*extra, host) if name not in WILDCARDS}
