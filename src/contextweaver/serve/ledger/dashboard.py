"""The live dashboard: the sessions with what they cost and saved, and one session's requests.

GET /contextweaver/dashboard                   the sessions, with the totals
GET /contextweaver/dashboard/session/{id}      its request timeline (tokens sent vs the history, cached
                                               share, cuts), each cut's note and what it left out and
                                               why, the failing and fixed tests, the dependency graph
GET /contextweaver/dashboard/graph/{id}        the graph viewer (export/html.py) for that session
GET /contextweaver/dashboard/api/...           what the pages poll: the same figures as the sessions API
GET /contextweaver/dashboard/assets/{name}     the page's own script and style
GET|POST /contextweaver/dashboard/sign-in      the sign-in (sign_in.py)

Pages are rendered here with the figures of the moment; dashboard.js then polls every 2 s and redraws, so
a new request shows up without a reload. Who sees what: signed in with the proxy token alone, the operator
sees every owner's sessions (owners by a short hash); with an agent's API key too, that key's sessions, as
the sessions API shows them to that agent.
"""

from __future__ import annotations

import html
import importlib.resources
from collections.abc import Callable
from typing import Any

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from contextweaver.serve.gate.guard import DASHBOARD, SIGN_IN, caller_of
from contextweaver.serve.ledger.inspect import (
    cost_of,
    money,
    session_page,
    session_requests,
    session_summary,
    short_owner,
    stored_budget,
    summed,
)
from contextweaver.serve.ledger.sign_in import SignIn

PREFIX = DASHBOARD
NEGATIVE = ("A negative saving is a cut's price: it rewrites the start of the prompt, so the provider's cache "
            "misses once and that request costs more than passing the history through; the smaller requests "
            "after it pay it back.")  # fmt: skip
PAGE = 1000
ASSETS = {"dashboard.js": "text/javascript", "dashboard.css": "text/css"}
POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
          "frame-src 'self'; frame-ancestors 'self'; base-uri 'none'; form-action 'none'")  # fmt: skip
HEADERS = {"content-security-policy": POLICY, "x-content-type-options": "nosniff", "referrer-policy": "no-referrer",
           "cache-control": "no-store"}  # fmt: skip


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
    boxes = "".join(f'<div class="figure"><b data-figure="{_e(name)}">{_e(value)}</b><span>{_e(name)}</span></div>'
                    for name, value in figures)  # fmt: skip
    hidden = "" if cost["usage_reported"] and cost["saved"] < 0 else " hidden"
    return f'<section class="totals" id="totals">{boxes}</section><p id="negative" class="note"{hidden}>{NEGATIVE}</p>'


def _view(operator: bool) -> str:
    if operator:
        return ('<p class="view">Operator\'s view: every owner\'s sessions; an owner is a short hash of the API '
                "key its agent sent (none: it sent only the proxy token).</p>")  # fmt: skip
    return '<p class="view">Your sessions: those of the API key you signed in with.</p>'


class Dashboard:
    """The dashboard's handlers, reading the same store as the sessions API: the caller's own sessions, or
    every session for the operator (`Caller.operator`)."""

    def __init__(self, store: Any, token: str | None = None) -> None:
        self.store = store
        self.sign_in = SignIn(token)

    def routes(self) -> list[Route]:
        return [
            Route(PREFIX, self.sessions, methods=["GET"]),
            Route(SIGN_IN, self.sign_in.page, methods=["GET"]),
            Route(SIGN_IN, self.sign_in.submit, methods=["POST"]),
            Route(PREFIX + "/session/{session_id}", self.session, methods=["GET"]),
            Route(PREFIX + "/graph/{session_id}", self.graph, methods=["GET"]),
            Route(PREFIX + "/api/sessions", self.listing, methods=["GET"]),
            Route(PREFIX + "/api/session/{session_id}/requests", self.requests, methods=["GET"]),
            Route(PREFIX + "/api/session/{session_id}", self.steps, methods=["GET"]),
            Route(PREFIX + "/assets/{name}", self.asset, methods=["GET"]),
        ]

    def _listed(self, request: Request) -> dict[str, Any]:
        """The sessions the caller may see (newest last, at most PAGE), each with its cost, and the totals."""
        caller = caller_of(request)
        if caller.operator:
            infos, totals = self.store.sessions(), self.store.request_totals()
            outside = self.store.passed_totals()
        else:
            infos, totals = (
                self.store.sessions_of(caller.owner)[0],
                self.store.owner_request_totals(caller.owner),
            )
            outside = {caller.owner: self.store.owner_passed_totals(caller.owner)}
        rows = [{**session_summary(info), "owner": short_owner(info.owner), "cost": cost_of(totals.get(info.id))}
                for info in infos[-PAGE:]]  # fmt: skip
        passed: list[dict[str, Any]] = [{"owner": short_owner(owner), "cost": cost_of(one)} for owner, one in outside.items()
                  if one["requests"]]  # fmt: skip
        return {"sessions": rows, "total": len(infos), "operator": caller.operator, "passed": passed,
                "cost": summed([*(cost_of(one) for one in totals.values()), *(p["cost"] for p in passed)])}  # fmt: skip

    async def listing(self, request: Request) -> Response:
        return JSONResponse(await anyio.to_thread.run_sync(self._listed, request))

    async def sessions(self, request: Request) -> Response:
        listed = await anyio.to_thread.run_sync(self._listed, request)
        operator = listed["operator"]
        rows = "".join(
            f'<tr data-session="{_e(s["id"])}"><td><a href="{PREFIX}/session/{_e(s["id"])}">{_e(s["id"])}</a></td>'
            + (f'<td class="owner">{_e(s["owner"])}</td>' if operator else "")
            + f"<td>{s['steps']}</td><td>{s['cost']['requests']}</td>"
            f"<td>{s['cost']['sent_tokens']:,} / {s['cost']['full_tokens']:,}</td>"
            + "".join(f"<td>{_e(v)}</td>" for v in money(s["cost"]))
            + f"<td>{s['cost']['cuts']}</td></tr>"
            for s in reversed(listed["sessions"])
        ) + "".join(
            '<tr class="passed"><td>outside sessions</td>'
            + (f'<td class="owner">{_e(p["owner"])}</td>' if operator else "")
            + f"<td>-</td><td>{p['cost']['requests']}</td><td>-</td>"
            + "".join(f"<td>{_e(v)}</td>" for v in money(p["cost"]))
            + "<td>-</td></tr>"
            for p in listed["passed"]
        )  # fmt: skip
        owner = "<th>owner</th>" if operator else ""
        body = (f"{_view(operator)}{_totals(listed['cost'])}"
                '<p class="note">Input cost in base-price tokens: cache reads and writes at their multipliers. '
                "Passed through whole: the same requests sent as the agent sent them (an estimate).</p>"
                f'<table id="sessions"><thead><tr><th>session</th>{owner}<th>steps</th><th>requests</th>'
                "<th>tokens sent / history</th><th>billed</th><th>passed through whole</th><th>saved</th>"
                f"<th>cuts</th></tr></thead><tbody>{rows}</tbody></table>")  # fmt: skip
        return _page("sessions", "sessions", body, operator="1" if operator else "")

    def _info(self, request: Request, session_id: str) -> Any:
        """The session's header when the caller may see it (its owner, or the operator), else None."""
        info = self.store.session(session_id)
        caller = caller_of(request)
        return info if info is not None and (caller.operator or info.owner == caller.owner) else None

    async def _read(
        self, request: Request, read: Callable[..., dict[str, Any] | None], *args: Any
    ) -> Response:
        session_id = request.path_params["session_id"]

        def found() -> dict[str, Any] | None:
            info = self._info(request, session_id)
            return None if info is None else read(self.store, session_id, info.owner, *args)

        data = await anyio.to_thread.run_sync(found)
        if data is None:
            return JSONResponse({"error": {"message": f"no session {session_id!r} here for this credential"}},
                                status_code=404)  # fmt: skip
        return JSONResponse(data)

    async def requests(self, request: Request) -> Response:
        """The session's cost and its requests after id `after` (the page polls with the last id it has)."""
        return await self._read(request, session_requests, _number(request, "after", 0), PAGE)

    async def steps(self, request: Request) -> Response:
        return await self._read(request, session_page, _number(request, "offset", 0), PAGE)

    async def session(self, request: Request) -> Response:
        session_id = request.path_params["session_id"]
        info = await anyio.to_thread.run_sync(self._info, request, session_id)
        if info is None:
            return _not_found(session_id)
        totals = await anyio.to_thread.run_sync(self.store.request_totals, session_id)
        cost = cost_of(totals.get(session_id))
        owner = f" · owner {short_owner(info.owner)}" if caller_of(request).operator else ""
        body = (f"{_totals(cost)}"
                f'<section><h2>Requests{_e(owner)}</h2><p class="note">Bars: the history the agent sent (light), the tokens '
                "forwarded (dark), the part a prefix cache could serve (green); a red line is a cut.</p>"
                '<div id="timeline" class="timeline"></div></section>'
                '<section class="split"><div><h2>Tests</h2><div id="tests"></div></div>'
                '<div><h2>Cuts</h2><div id="cuts"></div><div id="recalls"></div></div></section>'
                '<section><h2>Latest requests</h2><table id="requests"><thead><tr><th>#</th><th>step</th>'
                "<th>sent / history</th><th>cached</th><th>input</th><th>cache read</th><th>cache write</th>"
                "<th>output</th><th>billed</th><th>passed through</th><th>miss reason</th><th>status</th></tr>"
                "</thead><tbody></tbody></table></section>"
                f'<section><h2>Dependency graph</h2><iframe id="graph" title="dependency graph" '
                f'src="{PREFIX}/graph/{_e(session_id)}"></iframe></section>')  # fmt: skip
        return _page(f"session {session_id}", "session", body, session=session_id, steps=str(info.steps))

    async def graph(self, request: Request) -> Response:
        session_id = request.path_params["session_id"]
        page = await anyio.to_thread.run_sync(self._graph, request, session_id)
        if page is None:
            return _not_found(session_id)
        return HTMLResponse(page, headers={**HEADERS, "content-security-policy": "frame-ancestors 'self'"})

    def _graph(self, request: Request, session_id: str) -> str | None:
        """The graph viewer for the stored steps, coloured by the context the proxy's budget gives now
        (rebuilt read-only from the store: nothing is parsed or analyzed again)."""
        from contextweaver.export import to_html
        from contextweaver.store import Session

        info = self._info(request, session_id)
        if info is None:
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


def _number(request: Request, name: str, default: int) -> int:
    value = request.query_params.get(name, "")
    return int(value) if value.isdigit() and len(value) < 10 else default


def _not_found(what: str) -> Response:
    return HTMLResponse(f"<!DOCTYPE html><title>not found</title><p>No {_e(what)} here for this credential.</p>",
                        status_code=404, headers=HEADERS)  # fmt: skip
