"""Who may talk to the proxy, checked before any route runs (an ASGI middleware).

Threats covered: other processes or machines reading and appending to sessions (bearer token),
web pages reaching a loopback proxy through DNS rebinding (Host allow-list) or simple cross-site
POSTs (JSON content type only, foreign Origin refused), and one caller reading or extending another
caller's sessions (each request carries an owner: a keyed hash of the credential it presented).

The proxy token is sent as `Authorization: Bearer TOKEN` (the upstream then gets the operator's key,
never the token) or as `x-contextweaver-token: TOKEN` beside the caller's own upstream key.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from contextweaver.serve.gate.http import error

TOKEN_HEADER = "x-contextweaver-token"
RECALL = "/contextweaver/recall/"
"""Recall needs no token: its capability names one session (the agent's shell holds no token)."""
DASHBOARD = "/contextweaver/dashboard"
SIGN_IN = DASHBOARD + "/sign-in"
"""The dashboard's sign-in page checks the token itself (a form: the one write that is not JSON); a dashboard
page asked for without the token is sent there, as are its static assets' requests let through."""
LEDGER_READS = ("/contextweaver/sessions", "/contextweaver/passed", DASHBOARD)
"""Paths that read what the store holds per owner: only with a proxy token, which makes owners meaningful."""
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
CREDENTIAL_HEADERS = ("authorization", "api-key", "x-api-key")
WRITES = frozenset({"POST", "PUT", "PATCH"})


@dataclass(frozen=True)
class Caller:
    """What the guard learned about a request's sender."""

    owner: str | None
    """Keyed hash of the credential it presented (None: it presented none)."""
    authenticated: bool
    """It presented the proxy's token: it may use the operator's upstream key."""
    token_in_authorization: bool = False
    """The token came as its Authorization header, which must then not go upstream."""
    operator: bool = False
    """It presented the token and no credential of its own: the dashboard shows it every owner's sessions."""


def caller_of(request: Request) -> Caller:
    """The caller the guard admitted this request as (an unguarded app: nobody, no token)."""
    caller = request.scope.get("state", {}).get("caller")
    return caller if isinstance(caller, Caller) else Caller(None, False)


def host_name(value: str) -> str:
    """The host of a Host/Origin value, without scheme, port or IPv6 brackets, lower-cased."""
    value = value.split("://", 1)[-1].split("/", 1)[0].lower()
    if value.startswith("["):
        return value[1:].split("]", 1)[0]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def owner_of(credential: str | None, key: bytes) -> str | None:
    """A stable keyed hash of a credential: equal for the same credential, useless to anyone without `key`."""
    if not credential:
        return None
    return hmac.new(key, credential.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()[:32]


def bearer(value: str | None) -> str | None:
    if value is None:
        return None
    scheme, _, rest = value.strip().partition(" ")
    return rest.strip() if scheme.lower() == "bearer" else value.strip()


class Guard:
    """ASGI middleware: Host, Origin, content type and token checks; puts a Caller in scope["state"]."""

    def __init__(self, app: ASGIApp, *, token: str | None, allowed_hosts: frozenset[str] | None,
                 owner_key: bytes, error_for: Callable[[str], Callable[..., Any]] = lambda path: error) -> None:  # fmt: skip
        self.app = app
        self.error_for = error_for
        """The error function in the shape of a path's wire: a refused client shows the reason."""
        self.token = token
        self.allowed_hosts = allowed_hosts
        """None: any Host (a token-protected proxy bound to every interface)."""
        self.owner_key = owner_key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        refusal = self._refusal(scope, headers)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        scope.setdefault("state", {})["caller"] = self._caller(headers)
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope, headers: Headers) -> Any:
        error = self.error_for(scope["path"])
        if self.allowed_hosts is not None:
            host = host_name(headers.get("host", ""))
            if host not in self.allowed_hosts:
                return error(403, f"host {host!r} is not allowed: add it with --allowed-host",
                             kind="permission_error", code="host_not_allowed")  # fmt: skip
            origin = headers.get("origin")
            if origin and host_name(origin) not in self.allowed_hosts:
                return error(403, "cross-origin requests are refused", kind="permission_error",
                             code="origin_not_allowed")  # fmt: skip
        path = scope["path"]
        if path == SIGN_IN or path.startswith(DASHBOARD + "/assets/"):
            return None
        if (
            path.startswith(DASHBOARD)
            and scope["method"] == "GET"
            and (self.token is None or not self._has_token(headers))
        ):
            return RedirectResponse(SIGN_IN, status_code=303)
        if self.token is not None and not self._has_token(headers) and not path.startswith(RECALL):
            return error(401, "missing or wrong proxy token: send 'Authorization: Bearer TOKEN' or "
                         f"'{TOKEN_HEADER}: TOKEN'", kind="authentication_error", code="invalid_token",
                         headers={"www-authenticate": "Bearer"})  # fmt: skip
        if self.token is None and path.startswith(LEDGER_READS):
            return error(403, "reading sessions over HTTP needs a proxy token: start the proxy with "
                         "--auth-token-env, or read the store with `contextweaver sessions list --store FILE`",
                         kind="permission_error", code="token_required")  # fmt: skip
        if scope["method"] in WRITES:
            kind = headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if kind != "application/json" and not kind.endswith("+json"):
                return error(415, f"content type {kind or 'none'!r} is not accepted: send application/json",
                             code="unsupported_media_type")  # fmt: skip
        return None

    def _matches(self, value: str | None) -> bool:
        assert self.token is not None
        return value is not None and hmac.compare_digest(value.encode(), self.token.encode())

    def _has_token(self, headers: Headers) -> bool:
        return self._matches(headers.get(TOKEN_HEADER)) or self._matches(bearer(headers.get("authorization")))

    def _caller(self, headers: Headers) -> Caller:
        in_authorization = self.token is not None and self._matches(bearer(headers.get("authorization")))
        own = next(
            (bearer(headers.get(name)) for name in CREDENTIAL_HEADERS
             if headers.get(name) and not (name == "authorization" and in_authorization)),
            None,
        )  # fmt: skip
        credential = own or (self.token if self.token is not None else None)
        operator = self.token is not None and own is None
        return Caller(
            owner_of(credential, self.owner_key), self.token is not None, in_authorization, operator
        )
