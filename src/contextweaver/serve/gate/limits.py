"""Bounded memory in flight, and request bodies that must arrive in time (an ASGI middleware).

A request costs the proxy and its weaving process many times its size while it is parsed, read,
woven and pickled (issue 27: one 30 MB request took 1.9 GB, eight at once 11.7 GB). So the bytes of
request bodies held at once are bounded, and so are the requests being served. Issue 44: counted by
Content-Length before the body arrived, two clients that declared 32 MB each and then sent a byte
every 2 s locked everyone else out. Now:

- bytes count as they arrive, and a body must arrive by its deadline (`body_timeout` plus
  `body_seconds_per_mb` per MB, of its Content-Length or of what a chunked body has sent): a slower
  one is a 408, logged, and its connection closed. A body that still keeps pace is read to its end
  and dropped first (issue 53: a client sending 30 MB at 256 KB/s, which reads only once it has sent
  everything, as httpx and requests do, saw a broken pipe instead of the 408);
- a request counts against `max_requests` once its whole body is in: a slow body holds no slot;
- one owner (the credential's hash; the connection when there is none) holds at most OWNER_SHARE of
  the bytes, and of the request slots, while anything else is in flight (issue 53: one key's 64 long
  requests took every slot);
- a body that stalls holds its bytes only until someone else needs them (issue 53: two made-up keys
  sent all of a 32 MB body but its last 20 bytes, then dripped, and held all 64 MB for 74 s, again
  and again). A body lags once it has not delivered STALL_BYTES in `stall_seconds`; when a request
  does not fit, lagging bodies are cut, largest first, with a 408 `body_stalled`, until it does.
  Their bytes count as freed at once (the cut request drops them while it unwinds).

Past a limit a request is a 503 with Retry-After in its wire's error shape: before its body is read
when its Content-Length cannot fit, else as soon as a chunk passes the limit. A request alone is
always admitted, so a body under --max-body-mb is never refused for its size alone. Health checks
are never counted nor refused: they report these counts. A caller that hangs up mid-body is a 499
(one INFO line of the error log), not an error.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import anyio
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from contextweaver.errors import ContextWeaverError

MB = 1024 * 1024
UNCOUNTED = ("/contextweaver/health", "/health")
OWNER_SHARE = 0.5
"""Share of --max-in-flight-mb, and of --max-in-flight, one owner may hold while others are in flight (a round
half: the rest is always left to other callers, and one body at the default --max-body-mb still fits)."""
CLIENT_GONE = 499
STALL_BYTES = 64 * 1024
"""What a body must deliver every `stall_seconds` to keep pace: 64 KB/s at the default 1 s, a quarter of a
slow 256 KB/s upload, and one read of the server's socket."""


@dataclass(frozen=True)
class InFlightLimits:
    """The bounds (benchmarks/proxy_limits.py, `memory`: eight 30 MB requests at once;
    benchmarks/slow_uploads.py: slow uploaders beside a normal caller)."""

    max_requests: int = 64
    max_bytes: int = 64 * MB
    retry_after: int = 2
    """Seconds a refused caller is told to wait."""
    body_timeout: float = 10.0
    """Seconds any request body may take to arrive, plus `body_seconds_per_mb` per MB of it."""
    body_seconds_per_mb: float = 2.0
    stall_seconds: float = 1.0
    """A body that delivered less than STALL_BYTES in this long lags: it is cut when another caller needs room."""

    def __post_init__(self) -> None:
        if self.max_requests < 1 or self.max_bytes < 1 or self.retry_after < 0:
            raise ValueError("in-flight limits are positive (requests, bytes) and retry_after >= 0")
        if self.body_timeout <= 0 or self.body_seconds_per_mb < 0 or self.stall_seconds <= 0:
            raise ValueError("body_timeout and stall_seconds are positive and body_seconds_per_mb >= 0")

    def body_deadline(self, size: int) -> float:
        """Seconds a body of `size` bytes may take to arrive."""
        return self.body_timeout + self.body_seconds_per_mb * size / MB


class OverCapacity(ContextWeaverError):
    """A body passed the bytes in flight (or its owner's share) while it was read, or its request the count."""


class BodyTimeout(ContextWeaverError):
    """A body did not arrive by its deadline."""


class BodyStalled(BodyTimeout):
    """A lagging body was cut to make room for another caller."""


@dataclass(eq=False)
class Arrival:
    """A body still arriving: what it holds, and when it last kept pace."""

    owner: str
    held: int = 0
    paced_at: float = field(default_factory=time.monotonic)
    paced_held: int = 0
    cut: bool = False
    waiting: anyio.CancelScope | None = None
    """The scope of its pending read, cancelled when it is cut."""

    def received(self, size: int) -> None:
        self.held += size
        if self.held - self.paced_held >= STALL_BYTES:
            self.paced_at, self.paced_held = time.monotonic(), self.held

    def lags(self, stall_seconds: float, now: float) -> bool:
        return not self.cut and now - self.paced_at > stall_seconds


@dataclass
class InFlight:
    """The counts, shared by the middleware that keeps them and the health route that shows them."""

    limits: InFlightLimits = field(default_factory=InFlightLimits)
    requests: int = 0
    """Requests whose body is in, being served."""
    receiving: int = 0
    """Requests whose body is still arriving."""
    bytes: int = 0
    """Body bytes received and held, by both."""
    refused: int = 0
    timed_out: int = 0
    owners: dict[str, int] = field(default_factory=dict)
    """Bytes held by owner."""
    served: dict[str, int] = field(default_factory=dict)
    """Requests being served, by owner."""
    arriving: set[Arrival] = field(default_factory=set)
    stalled: int = 0
    """Lagging bodies cut to make room."""

    def admits(self, size: int, owner: str) -> bool:
        """Whether a request declaring `size` bytes may start reading its body (its owner's share of bytes is
        checked as the bytes arrive: a body over --max-body-mb is then the route's 413, not a 503); lagging
        bodies are cut to make it room."""
        if self.alone():
            return True
        return self.requests < self.limits.max_requests and self.has_slot(owner) and self.room_for(size)

    def has_slot(self, owner: str) -> bool:
        """The owner serves fewer requests than its share of the slots."""
        return self.served.get(owner, 0) < max(1, int(self.limits.max_requests * OWNER_SHARE))

    def serve(self, owner: str, change: int) -> None:
        """A request of `owner` starts (+1) or ends (-1) being served."""
        self.requests += change
        left = self.served.pop(owner, 0) + change
        if left > 0:
            self.served[owner] = left

    def room_for(self, size: int, mine: Arrival | None = None) -> bool:
        """Whether `size` more bytes fit, once lagging bodies (not `mine`) are cut, largest first, if that suffices."""
        short = self.bytes + size - self.limits.max_bytes
        if short <= 0:
            return True
        now = time.monotonic()
        lagging = sorted((one for one in self.arriving if one is not mine and one.lags(self.limits.stall_seconds, now)),
                         key=lambda one: -one.held)  # fmt: skip
        if sum(one.held for one in lagging) < short:
            return False
        for one in _until(lagging, short):
            self.cut(one)
        return True

    def cut(self, arrival: Arrival) -> None:
        """Free a lagging body's bytes; its pending read ends in BodyStalled."""
        self.release(arrival.owner, arrival.held)
        arrival.held, arrival.cut = 0, True
        self.stalled += 1
        if arrival.waiting is not None:
            arrival.waiting.cancel()

    def alone(self, mine: int = 0) -> bool:
        """Nothing is in flight but the `mine` requests of the one asking."""
        return self.requests + self.receiving <= mine

    def hold(self, owner: str, size: int) -> None:
        self.bytes += size
        self.owners[owner] = self.owners.get(owner, 0) + size

    def release(self, owner: str, size: int) -> None:
        self.bytes -= size
        left = self.owners.pop(owner, 0) - size
        if left > 0:
            self.owners[owner] = left

    def over(self, arrival: Arrival) -> bool:
        limits = self.limits
        return not self.alone(1) and (
            not self.room_for(0, arrival)
            or self.owners.get(arrival.owner, 0) > limits.max_bytes * OWNER_SHARE
        )

    def summary(self) -> dict[str, int]:
        return {"requests": self.requests, "receiving": self.receiving, "bytes": self.bytes,
                "refused": self.refused, "timed_out": self.timed_out, "stalled": self.stalled,
                "max_requests": self.limits.max_requests, "max_bytes": self.limits.max_bytes}  # fmt: skip


def _until(lagging: list[Arrival], short: int) -> Iterator[Arrival]:
    """The first of `lagging` whose bytes together cover `short`."""
    for one in lagging:
        if short <= 0:
            return
        short -= one.held
        yield one


class InFlightGate:
    """ASGI middleware: counts each request and its body bytes while it is served; refuses past the limits,
    answers 408 to a body slower than its deadline.

    `error_for(path)` gives the error function in the shape of that path's wire."""

    def __init__(
        self, app: ASGIApp, *, counts: InFlight, error_for: Callable[[str], Callable[..., Any]]
    ) -> None:
        self.app = app
        self.counts = counts
        self.error_for = error_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in UNCOUNTED:
            await self.app(scope, receive, send)
            return
        counts, limits = self.counts, self.counts.limits
        declared, chunked = _content_length(scope), _chunked(scope)
        owner = _owner(scope)
        if not counts.admits(declared or 0, owner):
            await self._refuse(scope, receive, send)
            return
        started_at = time.monotonic()
        arrival = Arrival(owner)
        whole = not chunked and not declared  # no body to wait for: served at once
        counts.serve(owner, whole)
        counts.receiving += not whole
        if not whole:
            counts.arriving.add(arrival)
        started = False

        def late() -> str:
            return (f"{arrival.held} of {declared if declared is not None else '?'} bytes in "
                    f"{time.monotonic() - started_at:.0f} s")  # fmt: skip

        async def counted_receive() -> Message:
            nonlocal whole
            if whole:
                return await receive()
            deadline = started_at + limits.body_deadline(max(declared or 0, arrival.held))
            if not arrival.cut:
                with anyio.CancelScope(
                    deadline=anyio.current_time() + deadline - time.monotonic()
                ) as waiting:
                    arrival.waiting = waiting
                    message = await receive()
                arrival.waiting = None
            if arrival.cut:
                raise BodyStalled(f"{late()}, lagging while another caller needed the room")
            if waiting.cancelled_caught:
                raise BodyTimeout(late())
            if message["type"] != "http.request":
                return message
            size = len(message.get("body", b""))
            arrival.received(size)
            counts.hold(owner, size)
            if counts.over(arrival):
                raise OverCapacity(f"{counts.bytes} request bytes in flight")
            if not message.get("more_body", False):
                whole = True
                counts.arriving.discard(arrival)
                counts.receiving -= 1
                has_slot = counts.has_slot(owner)
                counts.serve(owner, 1)
                if not counts.alone(1) and (counts.requests > limits.max_requests or not has_slot):
                    raise OverCapacity(f"{counts.requests} requests in flight")
            return message

        async def watched_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted_receive, watched_send)
        except (OverCapacity, BodyTimeout, ClientDisconnect) as exc:
            if started:
                raise
            if isinstance(exc, OverCapacity):
                await self._refuse(scope, receive, send)
            elif isinstance(exc, BodyTimeout):
                if not isinstance(exc, BodyStalled) and not arrival.lags(
                    limits.stall_seconds, time.monotonic()
                ):
                    await self._drain(receive, arrival)
                await self._too_slow(scope, receive, send, exc)
            else:  # nobody reads it: the error log's INFO line is the point
                await send({"type": "http.response.start", "status": CLIENT_GONE, "headers": []})
                await send({"type": "http.response.body", "body": b""})
        finally:
            counts.serve(owner, -whole)
            counts.receiving -= not whole
            counts.arriving.discard(arrival)
            counts.release(owner, arrival.held)

    async def _drain(self, receive: Receive, arrival: Arrival) -> None:
        """Read and drop the rest of a body cut at its deadline while it keeps pace (at most --max-in-flight-mb
        more), so a client that reads only once it has sent everything reads the 408. Its bytes are freed first."""
        counts = self.counts
        counts.arriving.discard(arrival)
        counts.release(arrival.owner, arrival.held)
        arrival.held = 0
        pace, dropped = Arrival(arrival.owner), 0
        while dropped <= counts.limits.max_bytes:
            left = pace.paced_at + counts.limits.stall_seconds - time.monotonic()
            with anyio.move_on_after(max(0.0, left)) as waited:
                message = await receive()
            if waited.cancelled_caught or message["type"] != "http.request":
                return  # it lags, or the client left: the connection closes after the 408
            size = len(message.get("body", b""))
            dropped += size
            pace.received(size)
            if not message.get("more_body", False):
                return

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        counts = self.counts
        counts.refused += 1
        limits = counts.limits
        response = self.error_for(scope["path"])(
            503, f"the proxy is at its limit of requests in flight ({limits.max_requests} requests, "
            f"{limits.max_bytes // MB} MB of bodies, half of each per caller): retry after {limits.retry_after} s",
            kind="server_error", code="over_capacity",
            headers={"retry-after": str(limits.retry_after), "connection": "close"},
        )  # fmt: skip
        await response(scope, receive, send)

    async def _too_slow(self, scope: Scope, receive: Receive, send: Send, exc: BodyTimeout) -> None:
        self.counts.timed_out += 1
        limits = self.counts.limits
        client = scope.get("client") or ("-", 0)
        if isinstance(exc, BodyStalled):
            message = (f"the request body from {client[0]}:{client[1]} stalled ({exc}): a body that sends less than "
                       f"{STALL_BYTES // 1024} KB in {limits.stall_seconds:g} s gives its room to another caller; "
                       "send it at a steady pace, or retry")  # fmt: skip
        else:
            message = (f"the request body from {client[0]}:{client[1]} did not arrive in time ({exc}): a body may "
                       f"take {limits.body_timeout:g} s plus {limits.body_seconds_per_mb:g} s per MB "
                       "(--body-timeout, --body-seconds-per-mb)")  # fmt: skip
        code = "body_stalled" if isinstance(exc, BodyStalled) else "body_timeout"
        response = self.error_for(scope["path"])(408, message, code=code, headers={"connection": "close"})
        await response(scope, receive, send)


def _owner(scope: Scope) -> str:
    """Who holds the bytes: the guard's owner hash, else this connection (one client address and port)."""
    caller = scope.get("state", {}).get("caller")
    owner = getattr(caller, "owner", None)
    return owner if isinstance(owner, str) else f"connection {scope.get('client')}"


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() and len(text) < 19 else None
    return None


def _chunked(scope: Scope) -> bool:
    return any(name == b"transfer-encoding" for name, _ in scope.get("headers", []))
