"""One log line for every refused or failed request, whoever answered it (an ASGI middleware, outermost).

The guard's 401/403/415, the in-flight gate's 503, a 404 from a wrong base URL, the proxy's own 4xx/5xx
and the upstream's error answers are each one WARNING line with the method, path, status, session and
the reason the body gives, marked `proxy` (with its code) or `upstream`: an operator sees why a client
failed without reading the client's screen. A caller that went away (499) is one INFO line.
"""

from __future__ import annotations

import json
import logging

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from contextweaver.serve.http import ERROR_HEADER, SESSION_HEADER
from contextweaver.serve.redact import redact_text
from contextweaver.serve.routes import is_store_failure

log = logging.getLogger("contextweaver.serve")
KEPT = 16_384
"""Bytes of an error body read for its reason (error bodies are small; a longer one is cut)."""
CLIENT_GONE = 499


class ErrorLog:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
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
        except Exception as exc:  # answered by the app's handler: a store failure 503, anything else 500
            failed = (503, "store_unavailable") if is_store_failure(exc) else (500, "internal_error")
            line(scope, failed[0], headers, f"proxy {failed[1]}: {type(exc).__name__}")
            raise


def line(scope: Scope, status: int, headers: Headers, why: str) -> None:
    session = headers.get(SESSION_HEADER) or Headers(scope=scope).get(SESSION_HEADER) or "-"
    level = logging.INFO if status == CLIENT_GONE else logging.WARNING
    log.log(level, "%s %s: %d for session %s: %s", scope["method"], scope["path"], status, session,
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
