"""Whether the upstream can be reached, for the health route: a TCP connection, cached, never a request.

A proxy whose store works is "ok" to its own health check even when every request it forwards fails
with a 502; the health answer then says "degraded" with the reason. The check opens one TCP connection
to the upstream's host and port (no HTTP request, nothing billed, no credential sent) at most once per
TTL seconds however often health is asked, and only one check runs at a time.
"""

from __future__ import annotations

import time
from urllib.parse import urlsplit

import anyio

TTL = 15.0
"""Seconds one answer is reused: a load balancer polling every second costs one connection per TTL."""
TIMEOUT = 2.0
"""Seconds a connection may take before the upstream counts as unreachable."""


class UpstreamProbe:
    def __init__(self, base_url: str, shown: str, *, ttl: float = TTL, timeout: float = TIMEOUT) -> None:
        parts = urlsplit(base_url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.shown = shown
        self.ttl = ttl
        self.timeout = timeout
        self._checked = -float("inf")
        self._problem: str | None = None
        self._lock = anyio.Lock()

    async def problem(self) -> str | None:
        """None when the upstream accepted a connection within the last TTL seconds, else why not."""
        async with self._lock:
            if time.monotonic() - self._checked >= self.ttl:
                self._problem = await self._connect()
                self._checked = time.monotonic()
            return self._problem

    async def _connect(self) -> str | None:
        try:
            with anyio.fail_after(self.timeout):
                stream = await anyio.connect_tcp(self.host, self.port)
            await stream.aclose()
        except TimeoutError:
            return f"the upstream {self.shown} did not accept a connection within {self.timeout:.0f} s"
        except OSError as exc:  # anyio's "all connection attempts failed" holds the last attempt's error
            cause = exc.__cause__ if isinstance(exc.__cause__, OSError) else exc
            return (
                f"cannot reach the upstream {self.shown}: {type(cause).__name__}: {cause.strerror or cause}"
            )
        return None
