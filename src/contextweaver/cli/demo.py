"""`contextweaver demo`: the proxy in front of a deterministic local upstream, driven by a scripted agent.

No key and no network: the upstream is `contextweaver fake-upstream`'s (testing/fake_upstream.py), the
agent is testing/scripted_agent.py, and the budget is small, so within seconds the dashboard shows
the session's requests, a cut with its working-state note, and a recall of a step the cut left out.
"""

from __future__ import annotations

import logging
import secrets
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import click

from contextweaver.cli.options import TokenBudget
from contextweaver.cli.serve import _cannot_listen

AGENT_KEY = "sk-demo-agent"
"""The scripted agent's own (fake) API key: its sessions are owned by it, as a real agent's are."""


@click.command("demo")
@click.option("--port", default=8400, show_default=True, type=click.IntRange(0, 65535),
              help="Port of the proxy (a free one when this one is taken; 0: always a free one).")  # fmt: skip
@click.option("--budget", type=TokenBudget(), default=6000, show_default=True,
              help="Token budget of each woven context: small, so the session is cut within a few seconds.")  # fmt: skip
@click.option(
    "--turns", default=48, show_default=True, type=click.IntRange(1, 500), help="Agent turns to play."
)
@click.option("--pace", default=0.4, show_default=True, type=click.FloatRange(0),
              help="Seconds between turns, to watch the dashboard fill.")  # fmt: skip
@click.option(
    "--store", "store_location", help="SQLite file to keep the session in (default: a temporary one)."
)
@click.option("--exit-after", type=click.FloatRange(0), default=None,
              help="Seconds to keep serving once the session is played, then exit (default: until Ctrl-C).")  # fmt: skip
@click.option("--no-wait", is_flag=True, help="Exit as soon as the session is played (--exit-after 0).")
def command(port: int, budget: int, turns: int, pace: float, store_location: str | None,
            exit_after: float | None, no_wait: bool) -> None:  # fmt: skip
    """Watch the proxy cut a scripted agent session and recall a step, on the dashboard, with no key."""
    import uvicorn

    from contextweaver.config import WeaverConfig
    from contextweaver.serve.app import ProxySettings, create_app
    from contextweaver.serve.sessions.build import build_manager
    from contextweaver.serve.sessions.recall import with_proxy_hint
    from contextweaver.testing.fake_upstream import fake_upstream

    host = "127.0.0.1"
    port = port if port and _cannot_listen(host, port) is None else _free_port(host)
    logging.basicConfig(level=logging.WARNING, format="%(name)s %(levelname)s %(message)s")
    with tempfile.TemporaryDirectory(prefix="contextweaver-demo-") as folder, fake_upstream() as upstream:
        location = store_location or str(Path(folder) / "demo.db")
        token = secrets.token_urlsafe(24)
        manager = build_manager(location, with_proxy_hint(WeaverConfig(), host, port), budget=budget)
        settings = ProxySettings(upstream=upstream.base_url, auth_token=token, weaving_threads=2)
        server = uvicorn.Server(uvicorn.Config(create_app(settings, manager), host=host, port=port,
                                               log_level="warning", access_log=False, log_config=None))  # fmt: skip
        base = f"http://{host}:{port}"
        click.echo(f"contextweaver demo: a scripted agent -> the proxy on {base}/v1 -> a fake upstream on "
                   f"{upstream.base_url} (no key, nothing leaves this machine; budget {budget:,} tokens)\n"
                   f"  dashboard: {base}/contextweaver/dashboard?token={token}\n"
                   f"  (or open {base}/contextweaver/dashboard and sign in with the token {token})", err=True)  # fmt: skip
        wait = 0.0 if no_wait else exit_after
        player = threading.Thread(target=_play, args=(server, base, token, turns, pace, manager.store, wait),
                                  name="demo-agent", daemon=True)  # fmt: skip
        player.start()
        server.run()


def _play(
    server: Any, base: str, token: str, turns: int, pace: float, store: Any, wait: float | None
) -> None:
    """Play the agent's turns once the server listens, say what the dashboard now shows, then stop the
    server after `wait` seconds (None: leave it serving until Ctrl-C)."""
    from contextweaver.testing.scripted_agent import ScriptedAgent

    while not server.started:
        time.sleep(0.05)
    session = next(
        f"demo-{n}" for n in range(1, 10**6) if store.session(f"demo-{n}") is None
    )  # a kept --store
    headers = {"authorization": f"Bearer {AGENT_KEY}", "x-contextweaver-token": token,
               "x-contextweaver-session": session}  # fmt: skip
    agent = ScriptedAgent(
        f"{base}/v1", headers, turns=turns, pace=pace, said=lambda line: click.echo(f"  {line}", err=True)
    )
    try:
        agent.run()
        _told(store, session, turns, agent.recalls, base)
    except Exception as exc:  # the demo says what failed, then stops
        click.echo(f"demo: the scripted session failed: {type(exc).__name__}: {exc}", err=True)
        wait = 0.0
    if wait is None:
        click.echo("Serving until Ctrl-C.", err=True)
        return
    time.sleep(wait)
    server.should_exit = True


def _told(store: Any, session: str, turns: int, recalls: int, base: str) -> None:
    """What the session did and cost (its requests are stored as their answers arrive)."""
    from contextweaver.serve.ledger.inspect import money, session_cost

    deadline = time.monotonic() + 5
    rows = store.requests(session)
    while len(rows) < turns and time.monotonic() < deadline:
        time.sleep(0.1)
        rows = store.requests(session)
    cuts = [row["step"] for row in rows if row["cut"]]
    cost = session_cost(store, session)
    billed, passthrough, saved = money(cost)
    why = ("\n  (A cut costs a cache miss; on a session this short the cuts cost more than they save: the saving "
           "comes as a history grows far past the budget.)") if cost["saved"] < 0 else ""  # fmt: skip
    click.echo(f"done: {len(rows)} requests woven, {len(cuts)} cut(s) (at steps {', '.join(map(str, cuts)) or '-'}), "
               f"{recalls} recall(s) answered by the proxy.\n"
               f"  billed {billed} base-price input tokens; passed through whole, about {passthrough}; saved {saved}."
               f"{why}\n  the session: {base}/contextweaver/dashboard/session/{session}", err=True)  # fmt: skip


def _free_port(host: str) -> int:
    import socket

    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])
