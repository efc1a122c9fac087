"""Bounded memory in flight: how many requests, and how many request bytes, the proxy holds at once.

A request costs the proxy and its weaving process many times its size while it is parsed, read,
woven and pickled (issue 27: one 30 MB request took 1.9 GB, eight at once 11.7 GB). Beyond either
limit a request is a 503 with Retry-After, in its wire's error shape, decided on its Content-Length
before any byte of its body is read. A body sent without a length (chunked) counts as it arrives
and is refused once it passes the limit. A request is always admitted when nothing else is in
flight, so a body under --max-body-mb is never refused for its size alone. Health checks are
never counted nor refused: they report these counts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from contextweaver.errors import ContextWeaverError

MB = 1024 * 1024
UNCOUNTED = ("/contextweaver/health", "/health")


@dataclass(frozen=True)
class InFlightLimits:
    """The bounds (benchmarks/proxy_limits.py, `memory`: eight 30 MB requests at once)."""

    max_requests: int = 64
    max_bytes: int = 64 * MB
    retry_after: int = 2
    """Seconds a refused caller is told to wait."""

    def __post_init__(self) -> None:
        if self.max_requests < 1 or self.max_bytes < 1 or self.retry_after < 0:
            raise ValueError("in-flight limits are positive (requests, bytes) and retry_after >= 0")


class OverCapacity(ContextWeaverError):
    """A chunked body passed the bytes in flight while it was read."""


@dataclass
class InFlight:
    """The counts, shared by the middleware that keeps them and the health route that shows them."""

    limits: InFlightLimits = field(default_factory=InFlightLimits)
    requests: int = 0
    bytes: int = 0
    refused: int = 0

    def admits(self, size: int) -> bool:
        if self.requests == 0:
            return True
        return self.requests < self.limits.max_requests and self.bytes + size <= self.limits.max_bytes

    def summary(self) -> dict[str, int]:
        return {"requests": self.requests, "bytes": self.bytes, "refused": self.refused,
                "max_requests": self.limits.max_requests, "max_bytes": self.limits.max_bytes}  # fmt: skip


class InFlightGate:
    """ASGI middleware: counts each request and its body bytes while it is served; refuses past the limits.

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
        counts = self.counts
        declared = _content_length(scope)
        if not counts.admits(declared or 0):
            await self._refuse(scope, receive, send)
            return
        held = declared or 0
        counts.requests += 1
        counts.bytes += held
        started = False

        async def counted_receive() -> Message:
            nonlocal held
            message = await receive()
            if declared is None and message["type"] == "http.request":
                size = len(message.get("body", b""))
                held += size
                counts.bytes += size
                if counts.requests > 1 and counts.bytes > counts.limits.max_bytes:
                    raise OverCapacity(f"{counts.bytes} request bytes in flight")
            return message

        async def watched_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted_receive, watched_send)
        except OverCapacity:
            if started:
                raise
            await self._refuse(scope, receive, send)
        finally:
            counts.requests -= 1
            counts.bytes -= held

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        counts = self.counts
        counts.refused += 1
        limits = counts.limits
        response = self.error_for(scope["path"])(
            503, f"the proxy is at its limit of requests in flight ({limits.max_requests} requests, "
            f"{limits.max_bytes // MB} MB of bodies): retry after {limits.retry_after} s",
            kind="server_error", code="over_capacity", headers={"retry-after": str(limits.retry_after)},
        )  # fmt: skip
        await response(scope, receive, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() and len(text) < 19 else None
    return None
