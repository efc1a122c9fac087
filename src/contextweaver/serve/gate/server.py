"""How the proxy's HTTP server runs so that slow or many clients cannot take it down.

Issue 27: 1,100 connections that never finished their headers (no token needed) used up the default
1,024 file descriptors, blocked every caller and logged 169 MB of accept() tracebacks in 70 s. So:
the soft file limit is raised to the hard one at start; a connection that has not finished a
request's headers within `header_timeout` seconds is closed (uvicorn only times out idle keep-alive
connections); uvicorn answers 503 past `limit_concurrency` connections and tasks; and each exactly
repeated log record is let through a few times a minute, with a count of the ones dropped.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import threading
import time
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

RESERVED_FILES = 128
"""Descriptors kept free of client connections: the store, the upstream's connections, the workers' pipes."""


@dataclass(frozen=True)
class ServerLimits:
    header_timeout: float = 10.0
    """Seconds a connection may take to send a request's headers (slowloris)."""
    keep_alive_timeout: int = 5
    limit_concurrency: int = 4096
    """Connections plus tasks beyond which uvicorn answers 503 (lowered to fit the file limit)."""
    graceful_timeout: int = 30
    """Seconds shutdown waits for requests in flight before cancelling them."""


def raise_file_limit() -> int:
    """Raise the soft RLIMIT_NOFILE to the hard limit (capped at 1M); the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = min(hard, 1 << 20) if hard != resource.RLIM_INFINITY else 1 << 20
    if wanted > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            logging.getLogger("contextweaver.serve").warning("cannot raise the file limit above %d", soft)
    return soft


class HeaderDeadline(H11Protocol):
    """uvicorn's h11 protocol, closing a connection that is slower than the deadline to send its headers."""

    header_timeout = ServerLimits.header_timeout

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self.header_timer: asyncio.TimerHandle | None = None
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._waiting():
            self._arm()
        super().data_received(data)
        if not self._waiting():
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _waiting(self) -> bool:
        """No request is being served: the connection owes us a request's headers."""
        return self.cycle is None or self.cycle.response_complete

    def _arm(self) -> None:
        if self.header_timer is None:
            self.header_timer = self.loop.call_later(self.header_timeout, self._expire)

    def _disarm(self) -> None:
        if self.header_timer is not None:
            self.header_timer.cancel()
            self.header_timer = None

    def _expire(self) -> None:
        self.header_timer = None
        if self._waiting() and not self.transport.is_closing():
            self.logger.debug(
                "closing a connection that sent no request headers in %.0f s", self.header_timeout
            )
            self.transport.close()


class RepeatLimit(logging.Filter):
    """Lets each record (logger, level and message as formatted) through `burst` times per `window`
    seconds; the next one let through says how many were dropped. Records that differ (another
    session, another status) are never held back by each other."""

    def __init__(self, burst: int = 20, window: float = 60.0, max_keys: int = 1024) -> None:
        super().__init__()
        self.burst, self.window, self.max_keys = burst, window, max_keys
        self._seen: dict[tuple[str, str], list[float]] = {}
        """[window start, records let through, records dropped] by key."""
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            text = record.getMessage()[:300]
        except (TypeError, ValueError):
            text = str(record.msg)[:300]
        key = (f"{record.name}:{record.levelno}", text)
        now = time.monotonic()
        with self._lock:
            if len(self._seen) > self.max_keys:
                self._seen.clear()
            start, passed, dropped = self._seen.get(key, (now, 0, 0))
            if now - start > self.window:
                start, passed = now, 0
            if passed >= self.burst:
                self._seen[key] = [start, passed, dropped + 1]
                return False
            self._seen[key] = [start, passed + 1, 0]
        if dropped:
            record.msg = f"{record.msg} [{int(dropped)} more like this dropped]"
        return True


def install_repeat_limit() -> None:
    """On every handler of the root logger (records of every logger pass through them)."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, RepeatLimit) for f in handler.filters):
            handler.addFilter(RepeatLimit())


def run(app: Any, host: str, port: int, log_level: str, limits: ServerLimits) -> None:
    """Serve `app` with uvicorn under these limits (the file limit raised first)."""
    import uvicorn

    files = raise_file_limit()
    protocol = type("Protocol", (HeaderDeadline,), {"header_timeout": limits.header_timeout})
    config = uvicorn.Config(
        app, host=host, port=port, log_level=log_level, access_log=False, log_config=None, http=protocol,
        timeout_keep_alive=limits.keep_alive_timeout, timeout_graceful_shutdown=limits.graceful_timeout,
        limit_concurrency=max(16, min(limits.limit_concurrency, files - RESERVED_FILES)),
    )  # fmt: skip
    uvicorn.Server(config).run()
