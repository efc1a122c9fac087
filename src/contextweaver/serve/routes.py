"""The proxy's route handlers: read and check a chat request, weave it off the event loop, forward it.

A request is parsed strictly and validated in full before anything is stored: a bad one is a 400
and its session is untouched. Weaving runs off the event loop, in worker processes (sessions/workers.py; the
CLI's default) or a bounded pool of threads, so health checks and other sessions keep being answered
while one session parses a large output. When the
memory itself fails on a step (a bug, not bad input), nothing of that step is stored and the request
goes upstream unwoven, marked with `x-contextweaver-fallback`: the conversation is never stuck.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from contextweaver.records import Message
from contextweaver.serve.gate.guard import Caller, caller_of
from contextweaver.serve.gate.http import SESSION_HEADER, BodyTooLarge, KeyedLocks, error, read_body
from contextweaver.serve.gate.limits import InFlight
from contextweaver.serve.gate.payload import BadPayload, is_escaped_unsafe, parse_body
from contextweaver.serve.gate.redact import redact_text
from contextweaver.serve.ledger.cache_ledger import CacheLedger
from contextweaver.serve.ledger.error_log import is_store_failure, store_unavailable
from contextweaver.serve.ledger.inspect import (
    cost_of,
    passed_page,
    session_page,
    session_requests,
    session_summary,
    summed,
)
from contextweaver.serve.ledger.metering import NO_STEP_YET, Forwarded, Metering, Passed
from contextweaver.serve.ledger.metrics import ProxyMetrics
from contextweaver.serve.sessions.loop_guard import LIMIT, LoopGuard
from contextweaver.serve.sessions.routing import (
    BadSessionId,
    BudgetTooSmall,
    DivergedHistory,
    NotOwner,
    SessionManager,
    Woven,
    check_session_id,
    lock_key,
)
from contextweaver.serve.sessions.simulation import Simulated, full_messages, opening
from contextweaver.serve.sessions.workers import WeavingProcesses
from contextweaver.serve.upstream.forward import Upstream
from contextweaver.serve.upstream.health import UpstreamProbe
from contextweaver.serve.wires.conversation import BadConversation, Conversation
from contextweaver.serve.wires.shapes import error_for
from contextweaver.serve.wires.wire import Payload, Wire, tool_tokens

log = logging.getLogger("contextweaver.serve")
FALLBACK_HEADER = "x-contextweaver-fallback"
PASSTHROUGH_HEADER = "x-contextweaver-passthrough"
CACHE_HEADER = "x-contextweaver-cached-prefix"
"""Share of the forwarded request a provider's prefix cache could serve (simulated)."""
PAGE_SIZE = 100
MAX_PAGE = 1000


class Routes:
    def __init__(self, manager: SessionManager, upstream: Upstream, *, max_body_bytes: int, fmt: str,
                 weaving_threads: int = 4, workers: WeavingProcesses | None = None,
                 in_flight: InFlight | None = None, metrics: ProxyMetrics | None = None) -> None:  # fmt: skip
        self.manager = manager
        self.in_flight = in_flight or InFlight()
        self.workers = workers
        """Worker processes that weave (None: threads of this process, bounded by `weaving_threads`)."""
        self.upstream = upstream
        self.max_body_bytes = max_body_bytes
        self.format = fmt
        self.locks = KeyedLocks()
        self.ledger = CacheLedger(holds=manager.holds)
        manager.on_evict = self.ledger.forget  # a dropped session's simulation goes with it (thread mode)
        self.weavers = anyio.CapacityLimiter(weaving_threads)
        self.loops = LoopGuard()
        self.refused = 0
        """Requests refused because the budget cannot hold their root and newest step."""
        self.store_error: str | None = None
        """The last store failure, until a request is stored again: /health is then not ok."""
        self.probe = UpstreamProbe(upstream.base, upstream.shown)
        self.store_failures = 0
        self.metrics = metrics or ProxyMetrics()
        self.metering = Metering(manager.store, self.ledger, self.metrics)
        self.metrics.read_at_scrape(self.counts)

    def counts(self) -> dict[str, object]:
        """What /metrics reads of the routes' own counts at each scrape."""
        failures = {"request": self.store_failures, "record": self.metering.write_failures}
        return {"refused": self.refused, "loops_stopped": self.loops.stopped, "store_failures": failures}

    def proxied(self, wire: Wire) -> Callable[[Request], Awaitable[Response]]:
        return functools.partial(self.weave_and_forward, wire=wire)

    async def weave_and_forward(self, request: Request, wire: Wire) -> Response:
        response = await self._weave_and_forward(request, wire)
        self.metrics.requests.labels(wire.name, str(response.status_code)).inc()
        return response

    async def _weave_and_forward(self, request: Request, wire: Wire) -> Response:
        """Read, weave, rewrite the body, simulate its prompt-cache use, forward: each a phase below."""
        started = time.perf_counter()
        read = await self._read(request, wire, started)
        if isinstance(read, Response):
            return read
        payload, conversation, state, session_id, body = read
        caller = caller_of(request)
        extra: dict[str, str] = {}
        weave = await self._woven(wire, conversation, session_id, caller, len(body), extra)
        if isinstance(weave, Response):
            return weave
        woven, use = weave
        sent, verbatim = self._written(wire, payload, conversation, state, woven, body)
        use = await self._cache_use(conversation, session_id, woven, sent, use, extra)
        elapsed = time.perf_counter() - started
        extra["server-timing"] = f"contextweaver;dur={elapsed * 1000:.2f}"
        self.metrics.latency.labels(wire.name).observe(elapsed)
        named = self.metrics.named(wire.name, payload.get("model"), caller.owner)
        streamed = bool(payload.get("stream"))
        if woven.session_id is not None and use is not None:
            on_answer = await self.metering.request(Forwarded(
                woven.session_id, wire.name, streamed, woven.steps, woven.added, elapsed, use, woven.context,
                extra.get(FALLBACK_HEADER), named))  # fmt: skip
        else:  # no step to store yet, or weaving failed
            reason = extra.get(FALLBACK_HEADER) or NO_STEP_YET
            on_answer = await self.metering.passed(
                Passed(wire.name, reason, caller.owner, streamed, elapsed, named)
            )
        # a history passed through goes out as it came: nothing rendered, nothing re-encoded
        content = body if verbatim else json.dumps(payload, ensure_ascii=False, allow_nan=False).encode()
        sent_at = time.perf_counter()
        answer = await self.upstream.forward(request, wire.upstream_path, content, extra, caller=caller,
                                             stream=bool(payload.get("stream")), on_answer=on_answer,
                                             fail=wire.error)  # fmt: skip
        return self.metrics.timed(answer, named, sent_at)

    async def _woven(self, wire: Wire, conversation: Conversation, session_id: str | None, caller: Caller,
                     size: int, extra: dict[str, str]) -> Response | tuple[Woven, Simulated | None]:  # fmt: skip
        """The woven request, or the refusal; unwoven and marked (`extra`) when weaving failed or the
        session's agent repeats its newest call."""
        use: Simulated | None = None
        try:
            woven, use = await self._weave(conversation, session_id, caller, size)
        except (DivergedHistory, NotOwner) as exc:
            code = "history_diverged" if isinstance(exc, DivergedHistory) else "session_taken"
            return wire.error(409, str(exc), kind="conflict", code=code)
        except BudgetTooSmall as exc:
            self.refused += 1
            headers = {SESSION_HEADER: exc.session_id} if exc.session_id else None
            return wire.error(400, str(exc), code="budget_too_small", headers=headers)
        except Exception as exc:
            if is_store_failure(exc):
                return self._store_failed(exc, wire.error)
            log.warning("weaving failed (%s: %s): forwarding the request unwoven", type(exc).__name__, exc)
            woven, extra[FALLBACK_HEADER] = Woven(None, None), "weaving-failed"
        if woven.session_id is not None:
            self.store_error = None  # the store took this request's steps
        if woven.session_id is not None and self.loops.looping(woven.session_id, woven.newest):
            log.warning("session %s: the same newest call arrived %d times in a row: forwarding it unwoven",
                        woven.session_id, LIMIT)  # fmt: skip
            woven, extra[FALLBACK_HEADER] = Woven(woven.session_id, None), "repeated-call"
        return woven, use

    def _written(self, wire: Wire, payload: Payload, conversation: Conversation, state: Any, woven: Woven,
                 body: bytes) -> tuple[list[Message] | None, bool]:  # fmt: skip
        """The messages sent (None when nothing was woven), written into the payload unless the request
        passes as sent, and whether the body goes out verbatim (as it came)."""
        as_sent = (woven.unchanged and wire.passes_as_sent(state)) or woven.context is None  # nothing woven
        verbatim = as_sent and not is_escaped_unsafe(body)
        if woven.context is None:
            return None, verbatim
        # passed through (unchanged), the request's own messages are the woven ones
        sent = conversation.messages if woven.unchanged else [*woven.context.messages, *conversation.pending]
        if not as_sent:
            wire.write(payload, sent or [], state)
        tools = conversation.reserved  # the budget holds the tool definitions sent beside the messages
        log.info("session %s: +%d steps, %d of %d tokens, %d of them tool definitions", woven.session_id,
                 woven.added, woven.context.tokens + tools, woven.context.full_history_tokens + tools, tools)  # fmt: skip
        return sent, verbatim

    async def _cache_use(self, conversation: Conversation, session_id: str | None, woven: Woven,
                         sent: list[Message] | None, use: Simulated | None,
                         extra: dict[str, str]) -> Simulated | None:  # fmt: skip
        """The request's prompt-cache use (simulated here unless its weaving process did) and, in
        `extra`, the session's id and the share of the request a prefix cache could serve."""
        if woven.session_id is None:
            return use
        extra[SESSION_HEADER] = sid = woven.session_id
        if use is None:
            whole = full_messages(conversation)
            sent = whole if sent is None else sent  # unwoven (the loop guard): the history goes whole
            seen = opening(woven.created, session_id is not None, sent, len(conversation.root))
            use = await anyio.to_thread.run_sync(self.ledger.simulate, sid, sent, whole, conversation.reserved,
                                                 seen)  # fmt: skip
        extra[CACHE_HEADER] = f"{self.ledger.record(sid, use.sent):.3f}"
        return use

    async def _read(
        self, request: Request, wire: Wire, started: float
    ) -> Response | tuple[Payload, Conversation, Any, str | None, bytes]:
        """The payload, its conversation, the wire's state, the named session and the body as read, or
        the 4xx (or the passthrough answer: its row is its owner's, outside sessions) for the caller."""
        error = wire.error
        try:
            body = await read_body(request, self.max_body_bytes)
            payload = parse_body(body)
        except BodyTooLarge as exc:
            return error(
                413, f"request body too large: the limit is {exc.limit} bytes", code="body_too_large"
            )
        except BadPayload as exc:
            return error(400, str(exc), code=exc.code)
        if not isinstance(payload, dict):
            return error(400, f"request body must be a JSON object with 'model' and '{wire.field}'")
        if wire.field not in payload:
            return error(
                400, f"missing required field '{wire.field}'", param=wire.field, code="missing_field"
            )
        skip = wire.passthrough(payload)
        if skip is not None:
            caller, streamed = caller_of(request), bool(payload.get("stream"))
            labels = self.metrics.named(wire.name, payload.get("model"), caller.owner)
            on_answer = await self.metering.passed(
                Passed(wire.name, skip, caller.owner, streamed, time.perf_counter() - started, labels)
            )
            sent_at = time.perf_counter()
            answer = await self.upstream.forward(request, wire.upstream_path, body, {PASSTHROUGH_HEADER: skip},
                                                 stream=streamed, caller=caller, on_answer=on_answer, fail=error)  # fmt: skip
            return self.metrics.timed(answer, labels, sent_at)
        named = request.headers.get(SESSION_HEADER)
        try:
            session_id = check_session_id(named) if named is not None else None
            conversation, state = wire.read(payload, self.format)
            conversation.reserved = tool_tokens(payload)
        except BadSessionId as exc:
            return error(400, str(exc), param=SESSION_HEADER, code="invalid_session_id")
        except BadConversation as exc:
            return error(400, str(exc), param=exc.param, code="invalid_messages")
        return payload, conversation, state, session_id, body

    async def _weave(self, conversation: Conversation, session_id: str | None,
                     caller: Caller, size: int) -> tuple[Woven, Simulated | None]:  # fmt: skip
        """The woven request, and its prompt-cache use when a weaving process already simulated it."""
        key = lock_key(conversation, session_id, caller.owner)
        async with self.locks.hold(key):
            if self.workers is not None:
                return await self.workers.weave(key, conversation, session_id, caller.owner, size)
            woven = await anyio.to_thread.run_sync(
                self.manager.weave, conversation, session_id, caller.owner, limiter=self.weavers
            )
            return woven, None

    async def passthrough(self, request: Request) -> Response:
        fail = error_for(request.url.path)
        try:
            body = await read_body(request, self.max_body_bytes)
        except BodyTooLarge as exc:
            return fail(413, f"request body too large: the limit is {exc.limit} bytes", code="body_too_large")
        path = request.url.path.removeprefix("/v1")
        return await self.upstream.forward(request, path, body, {}, stream=False, caller=caller_of(request),
                                           fail=fail)  # fmt: skip

    async def models(self, request: Request) -> Response:
        return await self.upstream.forward(
            request, "/models", None, {}, stream=False, caller=caller_of(request)
        )

    async def list_sessions(self, request: Request) -> Response:
        owner = caller_of(request).owner
        offset, limit = page_of(request)
        store = self.manager.store
        try:
            (infos, total), totals, outside = await anyio.to_thread.run_sync(
                lambda: (
                    store.sessions_of(owner, offset, limit),
                    store.owner_request_totals(owner),
                    store.owner_passed_totals(owner),
                )
            )
        except Exception as exc:
            if is_store_failure(exc):
                return self._store_failed(exc)
            raise
        page = [{**session_summary(info), "cost": cost_of(totals.get(info.id))} for info in infos]
        after, passed = offset + len(page), cost_of(outside)
        return JSONResponse({"sessions": page, "total": total, "passed": passed,
                             "cost": summed([*(cost_of(one) for one in totals.values()), passed]),
                             "next_offset": after if after < total else None})  # fmt: skip

    async def passed_requests(self, request: Request) -> Response:
        """GET /contextweaver/passed?after=N: the caller's requests forwarded outside any session (passed
        through as sent, or before their conversation had a step), after row id N, and their cost."""
        after, limit = page_of(request, "after")
        owner, store = caller_of(request).owner, self.manager.store
        try:
            page = await anyio.to_thread.run_sync(passed_page, store, owner, after, limit)
        except Exception as exc:
            if is_store_failure(exc):
                return self._store_failed(exc)
            raise
        return JSONResponse(page)

    async def show_session(self, request: Request) -> Response:
        offset, limit = page_of(request)
        detail = await self._session_read(request, session_page, offset, limit)
        if isinstance(detail, Response):
            return detail
        detail["prompt_cache"] = self.ledger.summary(request.path_params["session_id"])
        return JSONResponse(detail)

    async def session_requests(self, request: Request) -> Response:
        """GET /contextweaver/sessions/{id}/requests?after=N: the session's cost and its requests after
        request id N (a dashboard polls it with the last id it has)."""
        after, limit = page_of(request, "after")
        found = await self._session_read(request, session_requests, after, limit)
        return found if isinstance(found, Response) else JSONResponse(found)

    async def _session_read(
        self, request: Request, read: Callable[..., dict[str, Any] | None], *args: Any
    ) -> dict[str, Any] | Response:
        """What `read` finds of the caller's session, read off the event loop; a failing store is a 503, and
        another caller's session is as invisible as a missing one (404)."""
        session_id = request.path_params["session_id"]
        try:
            found = await anyio.to_thread.run_sync(
                read, self.manager.store, session_id, caller_of(request).owner, *args
            )
        except Exception as exc:
            if is_store_failure(exc):
                return self._store_failed(exc)
            raise
        if found is None:
            return error(404, f"no session {session_id!r} in the store", code="session_not_found")
        return found

    def _store_failed(self, exc: BaseException, error: Callable[..., Response] = error) -> Response:
        self.store_failures += 1
        self.store_error = redact_text(f"{type(exc).__name__}: {exc}")[:300]
        return store_unavailable(exc, error)

    async def health(self, request: Request) -> Response:
        """200 and "ok"; 200 and "degraded" (with the reason) while the upstream cannot be reached (upstream/health.py:
        a replica cannot fix that, so a load balancer keeps it); 503 and "store_failing" (with the error)
        from a store failure until a request is stored again: a full disk or a lost database shows here."""
        store = redact_text(self.manager.store.url)
        problem = await self.probe.problem()
        state = {"status": "store_failing", "store_error": self.store_error} if self.store_error else {}
        if problem:
            state = {"status": state.get("status", "degraded"), **state, "upstream_error": problem}
        return JSONResponse({"status": "ok", **state, "store": store, "upstream": self.upstream.shown,
                             "loops_stopped": self.loops.stopped, "budget_refused": self.refused,
                             "in_flight": self.in_flight.summary()},
                            status_code=503 if self.store_error else 200)  # fmt: skip


def page_of(request: Request, start: str = "offset") -> tuple[int, int]:
    """`offset` (or `start`) and `limit` query parameters, clamped (a bad value is the default, not an error)."""

    def number(name: str, default: int) -> int:
        value = request.query_params.get(name, "")
        return int(value) if value.isdigit() and len(value) < 10 else default

    return number(start, 0), max(1, min(MAX_PAGE, number("limit", PAGE_SIZE)))
