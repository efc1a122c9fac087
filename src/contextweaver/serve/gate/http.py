"""HTTP plumbing of the proxy: bounded body reading, OpenAI-style errors, 404 hints, header filtering, locks."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager

from starlette.requests import Request
from starlette.responses import JSONResponse

from contextweaver.errors import ContextWeaverError

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    }
)
SERVER_OWNED = frozenset({"date", "server"})
OWN_PREFIX = "x-contextweaver-"
SESSION_HEADER = "x-contextweaver-session"
ERROR_HEADER = "x-contextweaver-error"
"""On the proxy's own error answers (its code): the log tells them from the upstream's, and so can a client."""
HEALTH = "/contextweaver/health"
SERVED = ("/v1/messages", "/v1/responses", "/v1/chat/completions", "/v1/models", HEALTH)
VIEWS = ("/metrics", "/contextweaver/sessions[/{id}[/requests]]", "/contextweaver/dashboard",
         "/contextweaver/recall/{cap}/{steps}")  # fmt: skip
"""The proxy's own routes, named in a 404 beside the wires' (issue 53: the list left them out)."""


class BodyTooLarge(ContextWeaverError):
    def __init__(self, limit: int) -> None:
        super().__init__(f"request body larger than {limit} bytes")
        self.limit = limit


def error(status: int, message: str, *, kind: str = "invalid_request_error", param: str | None = None,
          code: str | None = None, headers: Mapping[str, str] | None = None) -> JSONResponse:  # fmt: skip
    """An error in OpenAI's shape, so the caller's client raises it with our message."""
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return JSONResponse(body, status_code=status, headers={ERROR_HEADER: code or kind, **(headers or {})})


def not_found_hint(path: str, base: str) -> str:
    """The likely fix for a 404 (`base`: this proxy's http://host:port), from the path a client asked for."""
    path = "/" + path.lstrip("/")
    if path.startswith("/v1/v1/"):
        return (f"the client's base URL ends in /v1 and the client adds another: for Claude Code and Anthropic "
                f"SDKs set ANTHROPIC_BASE_URL={base} (no /v1); OpenAI SDKs and Codex take {base}/v1")  # fmt: skip
    if any(("/v1" + path).startswith(served) for served in SERVED[:3]):
        return f"this proxy serves /v1{path}: the client's base URL needs /v1 ({base}/v1)"
    if path.rstrip("/").rsplit("/", 1)[-1] in ("health", "healthz", "ready", "readyz", "status"):
        return f"the health check is GET {base}{HEALTH} (or {base}/health)"
    return f"this proxy serves {', '.join(SERVED)}; and its own {', '.join(VIEWS)}"


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body, refusing more than `limit` bytes without holding them in memory."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(limit)
        chunks.append(chunk)
    return b"".join(chunks)


def upstream_headers(
    headers: Iterable[tuple[str, str]], fallback_key: str | None, *, drop_authorization: bool = False
) -> dict[str, str]:
    """The caller's headers for the upstream (its API key included), minus hop-by-hop and our own.

    `drop_authorization` when the Authorization header carried the proxy's own token; `fallback_key`
    (the operator's key) is given only to callers the guard authenticated, and never beside a key of
    the caller's own (Authorization, Azure's api-key, Anthropic's x-api-key).
    """
    out = {
        name: value
        for name, value in headers
        if name.lower() not in HOP_BY_HOP
        and not name.lower().startswith(OWN_PREFIX)
        and not (drop_authorization and name.lower() == "authorization")
    }
    if fallback_key and not has_own_key(out):
        out["authorization"] = f"Bearer {fallback_key}"
    return out


def has_own_key(headers: Mapping[str, str]) -> bool:
    """The outgoing headers already carry an upstream credential (the caller's, or one lent)."""
    return any(name.lower() in CALLER_KEYS for name in headers)


CALLER_KEYS = frozenset({"authorization", "api-key", "x-api-key"})


def response_headers(headers: Iterable[tuple[str, str]], extra: Mapping[str, str]) -> dict[str, str]:
    """The upstream's response headers for the caller (content-encoding kept: bytes pass unchanged).

    `date` and `server` are dropped: the proxy's own server writes them, and two of each confuse clients.
    """
    out = {name: value for name, value in headers if name.lower() not in HOP_BY_HOP | SERVER_OWNED}
    out.update(extra)
    return out


class KeyedLocks:
    """One asyncio lock per key, dropped when nobody holds or waits for it."""

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    @asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        lock, users = self._locks.get(key, (asyncio.Lock(), 0))
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[key]
            if users <= 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)

    def __len__(self) -> int:
        return len(self._locks)
