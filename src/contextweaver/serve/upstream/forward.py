"""Sending a request upstream and its answer back, cancelled as soon as the caller goes away.

The upstream URL may carry a query string (`?api-version=...`, `?key=...`): it is kept apart from
the path, and only its redacted form is ever shown. Credentials in the URL (a user and password, a
query value named like a key) are the operator's, like --api-key-env: lent only to callers holding
the proxy token that send no key of their own, never replacing one; other query values (an
api-version) go with every call. While the upstream is
being waited for, the caller's connection is watched; a caller that disconnects (a client timeout)
cancels the upstream call and frees its connection, instead of leaving it to run to the end.

`on_answer` is called once for every request, however it ends: the answer as it came, a stream the
upstream broke off or the caller left before its end (with what was seen of it), or no answer at all
(the upstream unreachable or late, the caller gone first), with a note saying which, for its row.

`--timeout` is a total deadline, not httpx's per-read one (issue 44: an upstream dripping a byte
at a time held a request 15 s under `--timeout 3`): the answer's status and headers, and a
non-streamed answer's whole body, come within it or the caller gets a 504. A streamed answer may
then run as long as it keeps sending; only a pause of `--timeout` between chunks ends it.
"""

from __future__ import annotations

import base64
import json
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar
from urllib.parse import SplitResult, parse_qsl, unquote, urlsplit, urlunsplit

import anyio
import httpx
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from contextweaver.serve.gate.guard import Caller
from contextweaver.serve.gate.http import (
    SESSION_HEADER,
    error,
    has_own_key,
    response_headers,
    upstream_headers,
)
from contextweaver.serve.gate.redact import redact_url
from contextweaver.serve.upstream.usage import Answer, Answered

log = logging.getLogger("contextweaver.serve")
T = TypeVar("T")
OnAnswer = Callable[[Answered], None]
"""Called once the caller has been sent every byte of an answer."""
KEY_PARAMS = frozenset({"key", "api-key", "api_key", "apikey", "token", "access_token", "auth", "sig",
                        "signature", "secret", "password", "code"})  # fmt: skip
"""Query parameters of an upstream URL that are credentials (Gemini's `key`, Azure SAS `sig`, ...)."""
CLIENT_GONE = 499  # nginx's "client closed request": logged, never read by anyone


class Upstream:
    """The upstream endpoint and the HTTP client that talks to it (opened by the app's lifespan)."""

    def __init__(
        self, base_url: str, *, timeout: float, api_key_env: str | None, transport: Any = None
    ) -> None:
        parts = urlsplit(base_url.strip())
        host = parts.netloc.rpartition("@")[2]
        self.base = urlunsplit(parts._replace(netloc=host, query="", fragment="")).rstrip("/")
        query = parse_qsl(parts.query, keep_blank_values=True)
        self.params = [(name, value) for name, value in query if name.lower() not in KEY_PARAMS]
        self.url_keys = [(name, value) for name, value in query if name.lower() in KEY_PARAMS]
        """Query credentials (`?key=`): lent like the userinfo."""
        self.url_auth = basic_auth(parts) if "@" in parts.netloc else None
        self.shown = redact_url(base_url)
        self.timeout = timeout
        self.api_key_env = api_key_env
        self.transport = transport
        self.client: httpx.AsyncClient | None = None

    def open(self) -> httpx.AsyncClient:
        limits = httpx.Limits(max_connections=256, max_keepalive_connections=64)
        timeout = httpx.Timeout(self.timeout, connect=min(30.0, self.timeout))
        self.client = httpx.AsyncClient(timeout=timeout, limits=limits, transport=self.transport)
        return self.client

    def _request(self, request: Request, path: str, content: bytes | None, caller: Caller) -> httpx.Request:
        assert self.client is not None, "the upstream client is opened by the app's lifespan"
        fallback = os.environ.get(self.api_key_env) if self.api_key_env and caller.authenticated else None
        headers = upstream_headers(
            request.headers.items(), fallback, drop_authorization=caller.token_in_authorization
        )
        sent = {name.encode("latin-1"): as_received(value) for name, value in headers.items()}
        if content is not None:
            sent[b"content-type"] = b"application/json"
        own = parse_qsl(request.url.query, keep_blank_values=True)
        lend = caller.authenticated and not any(name.lower() in KEY_PARAMS for name, _ in own)
        lent_keys = self.url_keys if lend and not has_own_key(headers) else []
        if self.url_auth and lend and not has_own_key(headers):
            sent[b"authorization"] = self.url_auth.encode()
        params: list[tuple[str, str | int | float | bool | None]] = [*self.params, *lent_keys, *own]
        return self.client.build_request(request.method, self.base + path, headers=sent, content=content,
                                         params=params or None)  # fmt: skip

    async def forward(self, request: Request, path: str, content: bytes | None, extra: dict[str, str], *,
                      stream: bool, caller: Caller, on_answer: OnAnswer | None = None,
                      fail: Callable[..., Response] = error) -> Response:  # fmt: skip
        """The upstream's answer (status, headers, bytes; SSE relayed as it comes) for the caller; `fail`
        makes the proxy's own 502/504 in the caller's wire shape, with the session the request belongs to."""
        assert self.client is not None
        client = self.client
        outgoing = self._request(request, path, content, caller)
        session = extra.get(SESSION_HEADER)
        own = {SESSION_HEADER: session} if session else {}
        deadline = anyio.current_time() + self.timeout

        def none(status: int, note: str) -> None:
            if on_answer is not None:
                told(on_answer, status, b"", False, note=note)

        def timed_out() -> Response:
            none(504, f"no answer: the upstream did not answer in {self.timeout:g} s")
            return fail(504, f"the upstream {self.shown} did not answer in {self.timeout:g} s (--timeout)",
                        kind="upstream_error", code="upstream_timeout", headers=own)  # fmt: skip

        try:
            answer = await until_disconnect(request, by(deadline, client.send(outgoing, stream=True)))
        except (httpx.TimeoutException, TimeoutError):
            return timed_out()
        except httpx.HTTPError as exc:
            none(502, f"no answer: the upstream is unreachable ({type(exc).__name__})")
            return fail(502, f"cannot reach the upstream {self.shown}: {type(exc).__name__}: check --upstream "
                        "and that it is running", kind="upstream_error", code="upstream_unreachable",
                        headers=own)  # fmt: skip
        if answer is None:
            none(CLIENT_GONE, "no answer: the caller hung up before the upstream answered")
            return Response(status_code=CLIENT_GONE)
        raw = ((name.decode("latin-1"), value.decode("latin-1")) for name, value in answer.headers.raw)
        out_headers = response_headers(raw, extra)  # the upstream's bytes, whatever their encoding
        if stream and answer.headers.get("content-type", "").startswith("text/event-stream"):
            relay = Relay(answer, on_answer, self.shown, session or "-")
            return Relayed(relay, status_code=answer.status_code, headers=out_headers)
        try:
            data = await until_disconnect(request, by(deadline, _read_all(answer)))
        except (httpx.TimeoutException, TimeoutError):
            return timed_out()
        except httpx.HTTPError as exc:
            none(
                answer.status_code, f"the upstream broke off its answer ({type(exc).__name__}): usage unread"
            )
            return fail(502, f"the upstream {self.shown} broke off its answer: {type(exc).__name__}",
                        kind="upstream_error", code="upstream_broken", headers=own)  # fmt: skip
        finally:
            await answer.aclose()
        if data is None:
            none(answer.status_code, "the caller hung up before the answer's body came: usage unread")
            return Response(status_code=CLIENT_GONE)
        after = None  # read once the caller has the answer, not before
        if on_answer is not None:
            encoding = answer.headers.get("content-encoding", "")
            after = BackgroundTask(told_later, on_answer, answer.status_code, data, False, encoding)
        return Response(data, status_code=answer.status_code, headers=out_headers, background=after)


def as_received(value: str) -> bytes:
    """A header value as the bytes it came in (Starlette decodes them as latin-1; httpx would encode a str
    as ASCII and fail on `x-title: café`); an operator's non-latin-1 value goes as UTF-8."""
    try:
        return value.encode("latin-1")
    except UnicodeEncodeError:
        return value.encode("utf-8")


def basic_auth(parts: SplitResult) -> str:
    user, password = unquote(parts.username or ""), unquote(parts.password or "")
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def url_credentials(url: str) -> bool:
    """Whether an upstream URL carries credentials (userinfo, or a query value named like a key)."""
    parts = urlsplit(url.strip())
    return "@" in parts.netloc or any(name.lower() in KEY_PARAMS for name, _ in parse_qsl(parts.query))


async def until_disconnect(request: Request, work: Awaitable[T]) -> T | None:
    """`work`'s result, or None (and `work` cancelled) when the caller disconnects first."""
    result: list[T] = []
    failure: list[Exception] = []

    async def run(cancel: Callable[[], None]) -> None:
        try:
            result.append(await work)
        except Exception as exc:  # re-raised below as itself, not inside an exception group
            failure.append(exc)
        cancel()

    async with anyio.create_task_group() as group:
        group.start_soon(run, group.cancel_scope.cancel)
        while True:  # the body is read: the next message is the disconnect, if it ever comes
            if (await request.receive())["type"] == "http.disconnect":
                group.cancel_scope.cancel()
                break
    if failure:
        raise failure[0]
    return result[0] if result else None


async def by(deadline: float, work: Awaitable[T]) -> T:
    """`work`'s result; TimeoutError (and `work` cancelled) past `deadline` (anyio's clock)."""
    with anyio.fail_after(max(0.0, deadline - anyio.current_time())):
        return await work


async def _read_all(answer: httpx.Response) -> bytes:
    return b"".join([chunk async for chunk in answer.aiter_raw()])


def told(on_answer: OnAnswer, status: int, data: bytes, streamed: bool, encoding: str = "",
         note: str | None = None) -> None:  # fmt: skip
    """`on_answer`, whose failure (a bug in reading usage, a full queue) never reaches the caller."""
    try:
        on_answer(Answered(status, data, streamed, encoding, note))
    except Exception:
        log.exception("reading the answer's usage failed; the answer was passed on unchanged")


async def told_later(on_answer: OnAnswer, status: int, data: bytes, streamed: bool, encoding: str) -> None:
    """`told`, as a response's background task (on the event loop, once the body is sent)."""
    told(on_answer, status, data, streamed, encoding)


class Relay:
    """The upstream's event stream, byte for byte, and its answer told once however the stream ends.

    A stream the upstream breaks off (an expected fault) is one WARNING line, no traceback, and ends
    with an `error` event that the OpenAI and Anthropic SDKs raise, not with a silently cut stream.
    A caller that leaves first (Codex hangs up on `response.completed`) cancels the relay: the usage
    seen so far is still told (issue 53: neither left a row)."""

    def __init__(self, answer: httpx.Response, on_answer: OnAnswer | None, shown: str, session: str) -> None:
        self.answer, self.on_answer, self.shown, self.session = answer, on_answer, shown, session
        self.kept = Answer()
        self.ended: str | None = None
        """How the stream ended: "" whole, else why not (None: it has not, so far)."""

    async def chunks(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self.answer.aiter_raw():
                self.kept.add(chunk)
                yield chunk
        except httpx.HTTPError as exc:
            log.warning("session %s: the upstream %s broke off its event stream after %d bytes: %s", self.session,
                        self.shown, self.kept.size, type(exc).__name__)  # fmt: skip
            self.finish(
                f"the upstream broke off its stream after {self.kept.size} bytes ({type(exc).__name__})"
            )
            yield broken_stream_event(f"the upstream {self.shown} broke off its answer: {type(exc).__name__}")
            return
        self.finish("")

    def finish(self, ended: str | None = None) -> None:
        """Tell the answer (once): `ended` says how the stream ended; None, that the caller left first."""
        if self.ended is not None:
            return
        self.ended = ended if ended is not None else (
            f"the caller hung up after {self.kept.size} bytes, before the upstream's stream ended")  # fmt: skip
        if self.on_answer is not None:
            told(self.on_answer, self.answer.status_code, self.kept.kept(), True,
                 self.answer.headers.get("content-encoding", ""), self.ended or None)  # fmt: skip


class Relayed(StreamingResponse):
    """A relayed event stream whose answer is told, and whose upstream connection is closed, however the
    response ends: sent whole, or cancelled when the caller hangs up."""

    def __init__(self, relay: Relay, *, status_code: int, headers: dict[str, str]) -> None:
        super().__init__(relay.chunks(), status_code=status_code, headers=headers)
        self.relay = relay

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.relay.finish()
            with anyio.CancelScope(shield=True):
                await self.relay.answer.aclose()


def broken_stream_event(message: str) -> bytes:
    """An SSE `error` event in the shape both SDKs read (Anthropic's, with OpenAI's `error` object)."""
    error = {"type": "api_error", "code": "upstream_broken", "message": message}
    return b"\n\nevent: error\ndata: " + json.dumps({"type": "error", "error": error}).encode() + b"\n\n"
