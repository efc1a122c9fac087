"""The OpenAI-compatible proxy: weave each chat request's history, forward it, pass the answer back.

POST /v1/chat/completions  read the conversation, store its new steps, weave, forward upstream;
                           the upstream's status, headers and bytes (SSE streams included) come
                           back unchanged, plus `x-contextweaver-session` and `server-timing`.
POST /v1/messages          the same for Anthropic Messages (wires/wire.py: one path, several formats);
POST /v1/responses         and for OpenAI Responses.
GET  /v1/models            passed through.
GET  /contextweaver/sessions[/{id}]  the caller's own sessions, paginated (`offset`, `limit`), with
                           each one's measured cost (ledger/metering.py);
GET  /contextweaver/sessions/{id}/requests  its forwarded requests: tokens, usage, cuts (`after`).
GET  /contextweaver/passed  the caller's requests forwarded outside any session, with their usage (`after`).
GET  /metrics              Prometheus text (ledger/metrics.py); behind the token when the proxy has one.
GET  /contextweaver/dashboard[/...]  the live dashboard (ledger/dashboard.py): the caller's sessions, or every
                           session for the token's holder; its sign-in (ledger/sign_in.py).
GET  /contextweaver/health (and /health)

Every request passes the guard (gate/guard.py: token, Host, content type, owner) first. Every error,
ours or unexpected, is answered in the shape of the wire asked for (wires/shapes.py), and logged once (ledger/error_log.py). The caller's headers, its API key among
them, go upstream and are never logged or stored.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from contextweaver.serve.gate.guard import LOOPBACK_HOSTS, Guard
from contextweaver.serve.gate.http import HEALTH, not_found_hint
from contextweaver.serve.gate.limits import InFlight, InFlightGate, InFlightLimits
from contextweaver.serve.ledger.dashboard import Dashboard
from contextweaver.serve.ledger.error_log import Answering, ErrorLog
from contextweaver.serve.ledger.metrics import ProxyMetrics
from contextweaver.serve.ledger.sign_in import DashboardLogin
from contextweaver.serve.ledger.spend import PriceTable
from contextweaver.serve.routes import Routes
from contextweaver.serve.sessions.recall import PATH as RECALL_PATH
from contextweaver.serve.sessions.recall import RecallRoute
from contextweaver.serve.sessions.routing import SessionManager
from contextweaver.serve.sessions.workers import WeavingProcesses
from contextweaver.serve.upstream.forward import Upstream
from contextweaver.serve.wires.anthropic import MESSAGES
from contextweaver.serve.wires.responses import RESPONSES
from contextweaver.serve.wires.shapes import error_for
from contextweaver.serve.wires.wire import CHAT

log = logging.getLogger("contextweaver.serve")
OWNER_SECRET = "owner-key"


@dataclass
class ProxySettings:
    upstream: str
    """The upstream's OpenAI base URL, with its /v1 (e.g. http://127.0.0.1:8080/v1)."""
    max_body_bytes: int = 32 * 1024 * 1024
    timeout: float = 600.0
    format: str = "auto"
    api_key_env: str | None = None
    """Environment variable with the operator's upstream key, lent only to callers with the proxy token."""
    auth_token: str | None = None
    """The proxy's bearer token; None only on loopback."""
    allowed_hosts: frozenset[str] | None = LOOPBACK_HOSTS
    """Host header values accepted (None: any, for a token-protected proxy on every interface)."""
    weaving_threads: int = 4
    prices: PriceTable = field(default_factory=PriceTable)
    """The price table /metrics counts spend with (ledger/spend.py)."""
    in_flight: InFlightLimits = field(default_factory=InFlightLimits)
    """Requests and request bytes held at once; beyond them a 503 with Retry-After (gate/limits.py)."""


def routes_of(handlers: Routes) -> list[Route]:
    recall = RecallRoute(handlers.manager.store)
    return [
        Route("/v1/chat/completions", handlers.proxied(CHAT), methods=["POST"]),
        Route("/chat/completions", handlers.proxied(CHAT), methods=["POST"]),
        Route("/v1/messages", handlers.proxied(MESSAGES), methods=["POST"]),
        Route("/v1/messages/count_tokens", handlers.passthrough, methods=["POST"]),
        Route("/v1/responses", handlers.proxied(RESPONSES), methods=["POST"]),
        Route("/v1/models", handlers.models, methods=["GET"]),
        Route("/models", handlers.models, methods=["GET"]),
        Route("/contextweaver/sessions", handlers.list_sessions, methods=["GET"]),
        Route("/contextweaver/passed", handlers.passed_requests, methods=["GET"]),
        Route("/contextweaver/sessions/{session_id}/requests", handlers.session_requests, methods=["GET"]),
        Route("/contextweaver/sessions/{session_id:path}", handlers.show_session, methods=["GET"]),
        Route(HEALTH, handlers.health, methods=["GET"]),
        Route("/health", handlers.health, methods=["GET"]),
        Route("/metrics", handlers.metrics.endpoint, methods=["GET"]),
        Route(RECALL_PATH + "{cap}/{handle}", recall.endpoint, methods=["GET"]),
        Route(RECALL_PATH + "{cap}/", recall.query_endpoint, methods=["GET"]),
    ]


async def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    found = exc.status_code == 404
    hint = (
        f": {not_found_hint(request.url.path, f'{request.url.scheme}://{request.url.netloc}')}"
        if found
        else ""
    )
    return error_for(request.url.path)(exc.status_code, f"{exc.detail}: {request.method} {request.url.path}{hint}",
                                       kind="not_found_error" if found else "invalid_request_error",
                                       code="not_found" if found else None, headers=exc.headers)  # fmt: skip


def create_app(settings: ProxySettings, manager: SessionManager, *, transport: Any = None,
               workers: WeavingProcesses | None = None) -> Starlette:  # fmt: skip
    upstream = Upstream(settings.upstream, timeout=settings.timeout, api_key_env=settings.api_key_env,
                        transport=transport)  # fmt: skip
    counts = InFlight(settings.in_flight)
    answering = Answering()
    handlers = Routes(manager, upstream, max_body_bytes=settings.max_body_bytes, fmt=settings.format,
                      weaving_threads=settings.weaving_threads, workers=workers, in_flight=counts,
                      metrics=ProxyMetrics(settings.prices))  # fmt: skip

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if workers is not None:
            await workers.start()
        try:
            async with upstream.open():
                yield
                await answering.drained(1.0)  # requests the shutdown deadline cut: their 503 goes out
                await handlers.metering.drain()
        finally:
            if workers is not None:
                workers.close()

    guard = Middleware(Guard, token=settings.auth_token, allowed_hosts=settings.allowed_hosts,
                       owner_key=manager.store.secret(OWNER_SECRET).encode(), error_for=error_for)  # fmt: skip
    return Starlette(
        routes=routes_of(handlers) + Dashboard(manager.store, settings.auth_token).routes(),
        middleware=[
            Middleware(ErrorLog, answering=answering),
            Middleware(DashboardLogin),
            guard,
            Middleware(InFlightGate, counts=counts, error_for=error_for),
        ],
        exception_handlers={HTTPException: http_error},  # the rest: ledger/error_log.py
        lifespan=lifespan,
    )
