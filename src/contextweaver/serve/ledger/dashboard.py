"""The live dashboard: the caller's sessions with what they cost and saved, and one session's requests.

GET /contextweaver/dashboard                   every session of the caller, with the totals
GET /contextweaver/dashboard/session/{id}      its request timeline (tokens sent vs the history, cached
                                               share, cuts), each cut's note and what it left out and
                                               why, the failing and fixed tests, the dependency graph
GET /contextweaver/dashboard/graph/{id}        the graph viewer (export/html.py) for that session
GET /contextweaver/dashboard/assets/{name}     the page's own script and style

Pages are rendered here with the figures of the moment; dashboard.js then polls the sessions API
every 2 s (the same numbers `contextweaver sessions` prints) and redraws, so a new request shows up
without a reload. The dashboard is behind the guard like the sessions API, and shows the sessions
of the credential it is opened with: a browser cannot send headers, so `?token=` (and `?key=`, the
agent's own API key when it sends one) are moved once into HttpOnly, SameSite=Strict cookies, which
`DashboardLogin` turns back into those headers for GETs under /contextweaver/ only.
"""

from __future__ import annotations

import html
import importlib.resources
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from contextweaver.serve.gate.guard import TOKEN_HEADER, caller_of
from contextweaver.serve.ledger.inspect import cost_of, money, stored_budget, summed

PREFIX = "/contextweaver/dashboard"
COOKIES = {"token": ("cw_token", TOKEN_HEADER), "key": ("cw_key", "x-api-key")}
"""Login query parameter -> (its cookie, the header the guard reads it from)."""
ASSETS = {"dashboard.js": "text/javascript", "dashboard.css": "text/css"}
POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
          "frame-src 'self'; frame-ancestors 'self'; base-uri 'none'; form-action 'none'")  # fmt: skip
HEADERS = {"content-security-policy": POLICY, "x-content-type-options": "nosniff", "referrer-policy": "no-referrer",
           "cache-control": "no-store"}  # fmt: skip


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
        if given and path.startswith(PREFIX):
            rest = urlencode([(name, value) for name, value in query if name not in COOKIES])
            response = RedirectResponse(path + (f"?{rest}" if rest else ""), status_code=303)
            for name, value in given.items():
                response.set_cookie(COOKIES[name][0], value, path="/contextweaver", httponly=True,
                                    samesite="strict", secure=scope.get("scheme") == "https")  # fmt: skip
            await response(scope, receive, send)
            return
        await self.app(_with_cookie_headers(scope), receive, send)


def _with_cookie_headers(scope: Scope) -> Scope:
    headers = list(scope.get("headers", []))
    present = {name for name, _ in headers}
    cookie = SimpleCookie()
    for name, value in headers:
        if name == b"cookie":
            cookie.load(value.decode("latin-1"))
    added = [(header.encode(), cookie[name].value.encode("latin-1")) for name, header in COOKIES.values()
             if name in cookie and header.encode() not in present]  # fmt: skip
    return {**scope, "headers": headers + added} if added else scope


def _asset(name: str) -> str:
    return (
        importlib.resources.files("contextweaver.serve.ledger")
        .joinpath("assets", name)
        .read_text(encoding="utf-8")
    )


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _page(title: str, page: str, body: str, **data: str) -> HTMLResponse:
    attributes = "".join(f' data-{name}="{_e(value)}"' for name, value in data.items())
    return HTMLResponse(f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(title)}</title><link rel="stylesheet" href="{PREFIX}/assets/dashboard.css"></head>
<body data-page="{page}"{attributes}>
<header><h1><a href="{PREFIX}">ContextWeaver</a> · {_e(title)}</h1><span id="live" class="live">live</span></header>
<main>{body}</main>
<script src="{PREFIX}/assets/dashboard.js"></script>
</body></html>""", headers=HEADERS)  # fmt: skip


def _totals(cost: dict[str, Any]) -> str:
    billed, passthrough, saved = money(cost)
    figures = [("requests", f"{cost['requests']:,}"), ("billed", billed), ("passed through whole", passthrough),
               ("saved", saved), ("cuts", f"{cost['cuts']:,}")]  # fmt: skip
    return "".join(f'<div class="figure"><b data-figure="{_e(name)}">{_e(value)}</b><span>{_e(name)}</span></div>'
                   for name, value in figures)  # fmt: skip


class Dashboard:
    """The dashboard's handlers, reading the same store and owner rule as the sessions API."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def routes(self) -> list[Route]:
        return [
            Route(PREFIX, self.sessions, methods=["GET"]),
            Route(PREFIX + "/session/{session_id}", self.session, methods=["GET"]),
            Route(PREFIX + "/graph/{session_id}", self.graph, methods=["GET"]),
            Route(PREFIX + "/assets/{name}", self.asset, methods=["GET"]),
        ]

    async def sessions(self, request: Request) -> Response:
        owner = _owner(request)
        (infos, _), totals = await anyio.to_thread.run_sync(
            lambda: (self.store.sessions_of(owner), self.store.owner_request_totals(owner))
        )
        mine = [(info, cost_of(totals.get(info.id))) for info in infos]
        rows = "".join(
            f'<tr data-session="{_e(info.id)}"><td><a href="{PREFIX}/session/{_e(info.id)}">{_e(info.id)}</a></td>'
            f"<td>{info.steps}</td><td>{cost['requests']}</td><td>{cost['sent_tokens']:,} / {cost['full_tokens']:,}</td>"
            + "".join(f"<td>{_e(v)}</td>" for v in money(cost))
            + f"<td>{cost['cuts']}</td></tr>"
            for info, cost in reversed(mine)
        )  # fmt: skip
        body = (f'<section class="totals" id="totals">{_totals(summed([c for _, c in mine]))}</section>'
                '<p class="note">Input cost in base-price tokens: cache reads and writes at their multipliers. '
                "Passed through whole: the same requests sent as the agent sent them (an estimate).</p>"
                '<table id="sessions"><thead><tr><th>session</th><th>steps</th><th>requests</th>'
                "<th>tokens sent / history</th><th>billed</th><th>passed through whole</th><th>saved</th>"
                f"<th>cuts</th></tr></thead><tbody>{rows}</tbody></table>")  # fmt: skip
        return _page("sessions", "sessions", body)

    async def session(self, request: Request) -> Response:
        session_id = request.path_params["session_id"]
        info = await anyio.to_thread.run_sync(self.store.session, session_id)
        if info is None or info.owner != _owner(request):
            return _not_found(session_id)
        totals = await anyio.to_thread.run_sync(self.store.request_totals, session_id)
        cost = cost_of(totals.get(session_id))
        body = (f'<section class="totals" id="totals">{_totals(cost)}</section>'
                '<section><h2>Requests</h2><p class="note">Bars: the history the agent sent (light), the tokens '
                "forwarded (dark), the part a prefix cache could serve (green); a red line is a cut.</p>"
                '<div id="timeline" class="timeline"></div></section>'
                '<section class="split"><div><h2>Tests</h2><div id="tests"></div></div>'
                '<div><h2>Cuts</h2><div id="cuts"></div></div></section>'
                '<section><h2>Latest requests</h2><table id="requests"><thead><tr><th>#</th><th>step</th>'
                "<th>sent / history</th><th>cached</th><th>input</th><th>cache read</th><th>cache write</th>"
                "<th>output</th><th>billed</th><th>passed through</th><th>miss reason</th><th>status</th></tr>"
                "</thead><tbody></tbody></table></section>"
                f'<section><h2>Dependency graph</h2><iframe id="graph" title="dependency graph" '
                f'src="{PREFIX}/graph/{_e(session_id)}"></iframe></section>')  # fmt: skip
        return _page(f"session {session_id}", "session", body, session=session_id, steps=str(info.steps))

    async def graph(self, request: Request) -> Response:
        session_id = request.path_params["session_id"]
        page = await anyio.to_thread.run_sync(self._graph, session_id, _owner(request))
        if page is None:
            return _not_found(session_id)
        return HTMLResponse(page, headers={**HEADERS, "content-security-policy": "frame-ancestors 'self'"})

    def _graph(self, session_id: str, owner: str | None) -> str | None:
        """The graph viewer for the stored steps, coloured by the context the proxy's budget gives now
        (rebuilt read-only from the store: nothing is parsed or analyzed again)."""
        from contextweaver.export import to_html
        from contextweaver.store import Session

        info = self.store.session(session_id)
        if info is None or info.owner != owner:
            return None
        session = Session.open(self.store, session_id, upto=info.steps)
        context = session.weaver.context(stored_budget(info.meta)) if info.steps else None
        return to_html(session.graph, context, title=f"session {session_id}")

    async def asset(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in ASSETS:
            return _not_found(name)
        return Response(_asset(name), media_type=ASSETS[name], headers={"cache-control": "no-cache",
                                                                        "x-content-type-options": "nosniff"})  # fmt: skip


def _owner(request: Request) -> str | None:
    return caller_of(request).owner


def _not_found(what: str) -> Response:
    return HTMLResponse(f"<!DOCTYPE html><title>not found</title><p>No {_e(what)} here for this credential.</p>",
                        status_code=404, headers=HEADERS)  # fmt: skip
