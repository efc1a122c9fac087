"""Getting into the dashboard: a sign-in page, then cookies the browser sends back by itself.

A browser cannot send the proxy's headers, so the token (and, optionally, the agent's own API key, to see
only that agent's sessions) is typed once into the sign-in form, or given once as `?token=`/`?key=` in a
printed link; either way it becomes an HttpOnly, SameSite=Strict cookie (the link is redirected to drop it
from the address bar), and `DashboardLogin` turns the cookies back into the guard's headers for GETs under
/contextweaver/ only: a cookie never authenticates a write. Signed in with the token alone, one is the
operator and sees every owner's sessions; with a key too, that key's sessions.
"""

from __future__ import annotations

import hmac
from http.cookies import SimpleCookie
from urllib.parse import parse_qsl, urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from contextweaver.serve.gate.guard import DASHBOARD, SIGN_IN, TOKEN_HEADER

COOKIES = {"token": ("cw_token", TOKEN_HEADER), "key": ("cw_key", "x-api-key")}
"""Login field -> (its cookie, the header the guard reads it from)."""
MAX_FORM = 4096
POLICY = "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
HEADERS = {"content-security-policy": POLICY, "x-content-type-options": "nosniff", "referrer-policy": "same-origin",
           "cache-control": "no-store"}  # fmt: skip
"""`same-origin`: under `no-referrer` a browser posts the form with `Origin: null`, which the guard refuses."""


def signed_in(target: str, given: dict[str, str], secure: bool) -> Response:
    """A redirect to `target` setting the cookies of `given` (a key not given is cleared: a new sign-in)."""
    response = RedirectResponse(target, status_code=303)
    for name, (cookie, _) in COOKIES.items():
        if given.get(name):
            response.set_cookie(cookie, given[name], path="/contextweaver", httponly=True, samesite="strict",
                                secure=secure)  # fmt: skip
        else:
            response.delete_cookie(
                cookie, path="/contextweaver", httponly=True, samesite="strict", secure=secure
            )
    return response


class DashboardLogin:
    """ASGI middleware before the guard: `?token=`/`?key=` on a dashboard page become cookies (then a
    redirect drops them from the address bar); the cookies become the guard's headers again."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or scope["method"] != "GET" or not path.startswith("/contextweaver/"):
            await self.app(scope, receive, send)
            return
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        given = {name: value for name, value in query if name in COOKIES}
        if given.get("token") and path.startswith(DASHBOARD):
            rest = urlencode([(name, value) for name, value in query if name not in COOKIES])
            target = (DASHBOARD if path == SIGN_IN else path) + (f"?{rest}" if rest else "")
            await signed_in(target, given, scope.get("scheme") == "https")(scope, receive, send)
            return
        await self.app(_with_cookie_headers(scope), receive, send)


def _with_cookie_headers(scope: Scope) -> Scope:
    headers = list(scope.get("headers", []))
    present = {name for name, _ in headers}
    cookie: SimpleCookie = SimpleCookie()
    for name, value in headers:
        if name == b"cookie":
            cookie.load(value.decode("latin-1"))
    added = [(header.encode(), cookie[name].value.encode("latin-1")) for name, header in COOKIES.values()
             if name in cookie and header.encode() not in present]  # fmt: skip
    return {**scope, "headers": headers + added} if added else scope


def _form(problem: str = "") -> str:
    warning = f'<p class="refused">{problem}</p>' if problem else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>sign in</title><link rel="stylesheet" href="{DASHBOARD}/assets/dashboard.css"></head>
<body data-page="sign-in"><header><h1>ContextWeaver · sign in</h1></header><main class="sign-in">{warning}
<form method="post" action="{SIGN_IN}">
<label>Proxy token <input type="password" name="token" autocomplete="current-password" required autofocus></label>
<p class="note">The value of the variable given to <code>contextweaver serve --auth-token-env</code> (the demo
prints it). With the token alone you see every owner's sessions, owners shown by a short hash.</p>
<label>Agent API key (optional) <input type="password" name="key" autocomplete="off"></label>
<p class="note">The key your agent sends upstream: then you see only its sessions, as that agent would.</p>
<button type="submit">Sign in</button></form>
<p class="note">Both are kept in HttpOnly, SameSite=Strict cookies for this proxy's pages only.</p></main>
</body></html>"""


NO_TOKEN = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>no token</title>
<link rel="stylesheet" href="{DASHBOARD}/assets/dashboard.css"></head>
<body data-page="sign-in"><header><h1>ContextWeaver · dashboard</h1></header><main class="sign-in">
<p>This proxy runs without a token, so it shows no sessions over HTTP: any program on this machine could read
them. Start it with one, then sign in here:</p>
<pre>export CW_TOKEN=$(python -c 'import secrets; print(secrets.token_urlsafe(24))')
contextweaver serve --upstream URL --auth-token-env CW_TOKEN</pre>
<p>Or read the store directly: <code>contextweaver sessions list --store FILE</code>.</p></main></body></html>"""


class SignIn:
    """GET: the form (or, on a proxy without a token, how to get one); POST: the token checked, the cookies set."""

    def __init__(self, token: str | None) -> None:
        self.token = token

    async def page(self, request: Request) -> Response:
        if self.token is None:
            return HTMLResponse(NO_TOKEN, status_code=403, headers=HEADERS)
        return HTMLResponse(_form(), headers=HEADERS)

    async def submit(self, request: Request) -> Response:
        if self.token is None:
            return HTMLResponse(NO_TOKEN, status_code=403, headers=HEADERS)
        body = await request.body()
        fields = dict(parse_qsl(body[:MAX_FORM].decode("utf-8", "replace"))) if len(body) <= MAX_FORM else {}
        given = fields.get("token", "")
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            return HTMLResponse(_form("That is not this proxy's token."), status_code=401, headers=HEADERS)
        return signed_in(DASHBOARD, fields, request.url.scheme == "https")
