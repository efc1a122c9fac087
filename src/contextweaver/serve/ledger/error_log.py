"""One log line for every refused or failed request, whoever answered it (an ASGI middleware, outermost).

The guard's 401/403/415, the in-flight gate's 503, a 404 from a wrong base URL, the proxy's own 4xx/5xx
and the upstream's error answers are each one WARNING line with the method, path, status, session and
the reason the body gives, marked `proxy` (with its code) or `upstream`: an operator sees why a client
failed without reading the client's screen. A caller that went away (499) is one INFO line.

It also answers what escapes the app, once: an unexpected exception is one ERROR line with its
traceback and a 500 in the wire's shape (not re-raised, so the server does not log it again), and a
request cut by the shutdown deadline (--shutdown-timeout) is a 503 `shutting_down` with Retry-After,
which a client retries elsewhere, instead of the server's bare 500.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable

from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from contextweaver.serve.gate.http import ERROR_HEADER, SESSION_HEADER
from contextweaver.serve.gate.http import error as openai_error
from contextweaver.serve.gate.redact import redact_text, shown_path
from contextweaver.serve.wires.shapes import error_for
from contextweaver.store.base import StoreError

log = logging.getLogger("contextweaver.serve")
KEPT = 16_384
"""Bytes of an error body read for its reason (error bodies are small; a longer one is cut)."""
CLIENT_GONE = 499


class Answering:
    """Requests not yet answered: shutdown gives the ones it cancelled a moment to send their 503."""

    def __init__(self) -> None:
        self.count = 0

    async def drained(self, seconds: float) -> None:
        deadline = asyncio.get_running_loop().time() + seconds
        while self.count and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)


class ErrorLog:
    def __init__(self, app: ASGIApp, answering: Answering | None = None) -> None:
        self.app = app
        self.answering = answering or Answering()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.answering.count += 1
        try:
            await self._logged(scope, receive, send)
        finally:
            self.answering.count -= 1

    async def _logged(self, scope: Scope, receive: Receive, send: Send) -> None:
        status = 0
        headers = Headers()
        body = b""

        async def watched(message: Message) -> None:
            nonlocal status, headers, body
            if message["type"] == "http.response.start":
                status, headers = message["status"], Headers(raw=message.get("headers", []))
            elif message["type"] == "http.response.body" and status >= 400:
                body += message.get("body", b"")[: max(0, KEPT - len(body))]
                if not message.get("more_body", False):  # logged before the client has the answer's end
                    line(scope, status, headers, reason(status, headers, body))
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except asyncio.CancelledError:  # only the server's shutdown deadline cancels a request's task
            if status:
                line(scope, status, headers, "cut by the shutdown deadline (--shutdown-timeout) mid-answer")
                return
            await shutting_down(scope["path"])(scope, receive, watched)
        except Exception as exc:
            if status:  # the answer has begun: the server closes the connection
                line(scope, status, headers, f"proxy internal_error mid-answer: {type(exc).__name__}")
                raise
            await failure(scope, exc)(scope, receive, watched)


def failure(scope: Scope, exc: Exception) -> Response:
    """The answer to an exception no route handled: a store failure's 503, else a logged 500."""
    fail = error_for(scope["path"])
    if is_store_failure(exc):
        return store_unavailable(exc, fail)
    log.error(
        "unexpected %s on %s %s", type(exc).__name__, scope["method"], shown_path(scope["path"]), exc_info=exc
    )
    return fail(500, f"internal error ({type(exc).__name__}); the proxy log has the details",
                kind="server_error", code="internal_error")  # fmt: skip


def is_store_failure(exc: BaseException) -> bool:
    """A failure of the database (full disk, lost connection), not of the request or of the memory."""
    module = type(exc).__module__
    return isinstance(exc, StoreError) or module.startswith(("sqlite3", "psycopg"))


def store_unavailable(exc: BaseException, error: Callable[..., Response] = openai_error) -> Response:
    log.error("store failure: %s: %s", type(exc).__name__, exc)
    return error(503, f"the session store failed: {type(exc).__name__}: {exc}", kind="server_error",
                 code="store_unavailable")  # fmt: skip


def shutting_down(path: str) -> Response:
    return error_for(path)(503, "the proxy is shutting down and cut this request at its deadline "
                           "(--shutdown-timeout): retry it", kind="server_error", code="shutting_down",
                           headers={"retry-after": "1", "connection": "close"})  # fmt: skip


def line(scope: Scope, status: int, headers: Headers, why: str) -> None:
    session = headers.get(SESSION_HEADER) or Headers(scope=scope).get(SESSION_HEADER) or "-"
    level = logging.INFO if status == CLIENT_GONE else logging.WARNING
    log.log(level, "%s %s: %d for session %s: %s", scope["method"], shown_path(scope["path"]), status, session,
            redact_text(why)[:400])  # fmt: skip


def reason(status: int, headers: Headers, body: bytes) -> str:
    """Who answered (the proxy, with its code, or the upstream) and the message of the error body."""
    if status == CLIENT_GONE:
        return "the client closed the connection before the answer"
    own = headers.get(ERROR_HEADER)
    who = f"proxy {own}" if own else "upstream"
    message = ""
    try:
        found = json.loads(body).get("error", {})
        message = str(found.get("message", "")) if isinstance(found, dict) else str(found)
    except (ValueError, AttributeError, UnicodeDecodeError):
        message = body[:200].decode("utf-8", "replace").strip() if body and not own else ""
    return f"{who}: {message}" if message else who
