"""The OpenAI-compatible proxy: weave each chat request's history, forward it, pass the answer back.

POST /v1/chat/completions  read the conversation, store its new steps, weave, forward upstream;
                           the upstream's status, headers and bytes (SSE streams included) come
                           back unchanged, plus `x-contextweaver-session` and `server-timing`.
POST /v1/messages          the same for Anthropic Messages (wire.py: one path, several formats);
POST /v1/responses         and for OpenAI Responses.
GET  /v1/models            passed through.
GET  /contextweaver/sessions[/{id}]  what the store holds (404 for an unknown session).

The caller's headers, its API key among them, go upstream and are never logged or stored. Work on
one session is serialized by a lock; the weaving runs in a worker thread so other sessions and
streams keep flowing.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from contextweaver.serve.anthropic import MESSAGES
from contextweaver.serve.conversation import BadConversation
from contextweaver.serve.http import (
    BodyTooLarge,
    KeyedLocks,
    error,
    json_error_detail,
    read_body,
    response_headers,
    upstream_headers,
)
from contextweaver.serve.inspect import session_detail, session_summary
from contextweaver.serve.responses import RESPONSES
from contextweaver.serve.routing import (
    BadSessionId,
    DivergedHistory,
    SessionManager,
    check_session_id,
    lock_key,
)
from contextweaver.serve.wire import CHAT, Wire
from contextweaver.store.base import StoreError

log = logging.getLogger("contextweaver.serve")
SESSION_HEADER = "x-contextweaver-session"
PASSTHROUGH_HEADER = "x-contextweaver-passthrough"


@dataclass
class ProxySettings:
    upstream: str
    """The upstream's OpenAI base URL, with its /v1 (e.g. http://127.0.0.1:8080/v1)."""
    max_body_bytes: int = 32 * 1024 * 1024
    timeout: float = 600.0
    format: str = "auto"
    api_key_env: str | None = None
    """Environment variable with a key for callers that send none (the caller's own key wins)."""


def create_app(settings: ProxySettings, manager: SessionManager, *, transport: Any = None) -> Starlette:
    locks = KeyedLocks()
    upstream = settings.upstream.rstrip("/")
    state: dict[str, httpx.AsyncClient] = {}

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        limits = httpx.Limits(max_connections=256, max_keepalive_connections=64)
        timeout = httpx.Timeout(settings.timeout, connect=min(30.0, settings.timeout))
        async with httpx.AsyncClient(timeout=timeout, limits=limits, transport=transport) as client:
            state["client"] = client
            yield

    def proxied(wire: Wire) -> Callable[[Request], Awaitable[Response]]:
        return functools.partial(weave_and_forward, wire=wire)

    async def weave_and_forward(request: Request, wire: Wire) -> Response:
        started = time.perf_counter()
        error = wire.error
        try:
            body = await read_body(request, settings.max_body_bytes)
        except BodyTooLarge as exc:
            return error(
                413, f"request body too large: the limit is {exc.limit} bytes", code="body_too_large"
            )
        try:
            payload = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            detail = json_error_detail(exc) if isinstance(exc, json.JSONDecodeError) else "body is not UTF-8"
            return error(400, detail, code="invalid_json")
        if not isinstance(payload, dict):
            return error(400, f"request body must be a JSON object with 'model' and '{wire.field}'")
        if wire.field not in payload:
            return error(
                400, f"missing required field '{wire.field}'", param=wire.field, code="missing_field"
            )
        skip = wire.passthrough(payload)
        if skip is not None:
            return await forward(request, wire.upstream_path, body, {PASSTHROUGH_HEADER: skip},
                                 stream=bool(payload.get("stream")))  # fmt: skip
        named = request.headers.get(SESSION_HEADER)
        try:
            session_id = check_session_id(named) if named is not None else None
            conversation, state = wire.read(payload, settings.format)
        except BadSessionId as exc:
            return error(400, str(exc), param=SESSION_HEADER, code="invalid_session_id")
        except BadConversation as exc:
            return error(400, str(exc), param=exc.param, code="invalid_messages")
        try:
            async with locks.hold(lock_key(conversation, session_id)):
                woven = await anyio.to_thread.run_sync(manager.weave, conversation, session_id)
        except DivergedHistory as exc:
            return error(409, str(exc), kind="conflict", code="history_diverged")
        except StoreError as exc:
            log.exception("store failure")
            return error(
                503, f"the session store failed: {exc}", kind="server_error", code="store_unavailable"
            )
        if woven.context is not None:
            wire.write(payload, [*woven.context.messages, *conversation.pending], state)
            log.info("session %s: +%d steps, %d of %d tokens", woven.session_id, woven.added,
                     woven.context.tokens, woven.context.full_history_tokens)  # fmt: skip
        extra = {"server-timing": f"contextweaver;dur={(time.perf_counter() - started) * 1000:.2f}"}
        if woven.session_id is not None:
            extra[SESSION_HEADER] = woven.session_id
        return await forward(request, wire.upstream_path, json.dumps(payload).encode(), extra,
                             stream=bool(payload.get("stream")))  # fmt: skip

    async def passthrough(request: Request) -> Response:
        body = await read_body(request, settings.max_body_bytes)
        return await forward(request, request.url.path.removeprefix("/v1"), body, {}, stream=False)

    async def models(request: Request) -> Response:
        return await forward(request, "/models", None, {}, stream=False)

    async def forward(request: Request, path: str, content: bytes | None, extra: dict[str, str], *,
                      stream: bool) -> Response:  # fmt: skip
        client = state["client"]
        fallback = os.environ.get(settings.api_key_env) if settings.api_key_env else None
        headers = upstream_headers(request.headers.items(), fallback)
        if content is not None:
            headers["content-type"] = "application/json"
        url = upstream + path + (f"?{request.url.query}" if request.url.query else "")
        outgoing = client.build_request(request.method, url, headers=headers, content=content)
        try:
            answer = await client.send(outgoing, stream=True)
        except httpx.TimeoutException:
            return error(504, f"the upstream {upstream} did not answer in time", kind="upstream_error")
        except httpx.HTTPError as exc:
            return error(
                502, f"cannot reach the upstream {upstream}: {type(exc).__name__}", kind="upstream_error"
            )
        out_headers = response_headers(answer.headers.multi_items(), extra)
        if stream and answer.headers.get("content-type", "").startswith("text/event-stream"):
            return StreamingResponse(_relay(answer), status_code=answer.status_code, headers=out_headers)
        try:
            data = b"".join([chunk async for chunk in answer.aiter_raw()])
        except httpx.HTTPError as exc:
            return error(502, f"the upstream {upstream} broke off its answer: {type(exc).__name__}",
                         kind="upstream_error")  # fmt: skip
        finally:
            await answer.aclose()
        return Response(data, status_code=answer.status_code, headers=out_headers)

    async def list_sessions(request: Request) -> Response:
        infos = await anyio.to_thread.run_sync(manager.store.sessions)
        return JSONResponse({"sessions": [session_summary(info) for info in infos]})

    async def show_session(request: Request) -> Response:
        session_id = request.path_params["session_id"]
        detail = await anyio.to_thread.run_sync(session_detail, manager.store, session_id)
        if detail is None:
            return error(404, f"no session {session_id!r} in the store", code="session_not_found")
        return JSONResponse(detail)

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "store": manager.store.url, "upstream": upstream})

    routes = [
        Route("/v1/chat/completions", proxied(CHAT), methods=["POST"]),
        Route("/chat/completions", proxied(CHAT), methods=["POST"]),
        Route("/v1/messages", proxied(MESSAGES), methods=["POST"]),
        Route("/v1/messages/count_tokens", passthrough, methods=["POST"]),
        Route("/v1/responses", proxied(RESPONSES), methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/models", models, methods=["GET"]),
        Route("/contextweaver/sessions", list_sessions, methods=["GET"]),
        Route("/contextweaver/sessions/{session_id:path}", show_session, methods=["GET"]),
        Route("/contextweaver/health", health, methods=["GET"]),
    ]
    return Starlette(routes=routes, lifespan=lifespan)


async def _relay(answer: httpx.Response) -> AsyncIterator[bytes]:
    """The upstream's event stream, byte for byte; the upstream connection is closed either way."""
    try:
        async for chunk in answer.aiter_raw():
            yield chunk
    finally:
        await answer.aclose()
