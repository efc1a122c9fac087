"""Clients that send a request body slowly, over a raw socket (tests and benchmarks/slow_uploads.py).

with Dripping(port, declared=32 * MB, every=0.5, token=TOKEN) as slow:
    ...                 # the proxy holds a connection whose body arrives a byte at a time
slow.status, slow.elapsed   # what the proxy answered (0: nothing) and when, from the headers sent
slow.broken                 # the error that cut the sending ("": none)
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
import time
from types import TracebackType


class Dripping:
    """A POST declaring `declared` bytes (or chunked when None) that sends `burst` bytes at once, then `step`
    bytes every `every` seconds until the proxy answers or the block ends. `read_after`: the answer is read
    only once the whole body is sent, as httpx and requests do (a proxy that closes first is a broken pipe)."""

    def __init__(self, port: int, *, declared: int | None, every: float, token: str = "", step: int = 1,
                 credential: str = "sk-slow", path: str = "/v1/chat/completions", burst: int = 0,
                 read_after: bool = False) -> None:  # fmt: skip
        self.port, self.declared, self.every, self.step, self.burst = port, declared, every, step, burst
        self.head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     f"Authorization: Bearer {credential}\r\nx-contextweaver-token: {token}\r\n"
                     + (f"Content-Length: {declared}\r\n" if declared is not None else "Transfer-Encoding: chunked\r\n")
                     + "\r\n")  # fmt: skip
        self.read_after = read_after
        self.broken = ""
        self.status = 0
        self.body = b""
        self.elapsed = 0.0
        self.sent = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Dripping:
        self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=120)
        self.sock.sendall(self.head.encode())
        self.started = time.monotonic()
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join(10)
        with contextlib.suppress(OSError):  # close() alone sends no FIN while the reader blocks in recv
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()

    def wait(self, seconds: float) -> int:
        """The proxy's status once it answered, waiting up to `seconds` (0: no answer yet)."""
        self._thread.join(seconds)
        return self.status

    def _run(self) -> None:
        reader = threading.Thread(target=self._read, daemon=True)
        if not self.read_after:
            reader.start()
        piece = b'{"model": "m", "pad": "' + b"x" * max(0, self.step - 23)
        while (
            not self._stop.is_set()
            and not self.status
            and (self.declared is None or self.sent < self.declared)
        ):
            first = self.sent == 0
            size = max(self.step, self.burst) if first else self.step
            chunk = (piece + b"x" * size)[:size] if first else b"x" * size
            try:
                self.sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk) if self.declared is None else chunk)
            except OSError as exc:
                self.broken = f"{type(exc).__name__} after {self.sent} bytes"
                break
            self.sent += len(chunk)
            self._stop.wait(self.every)
        if self.read_after and not self.broken:
            reader.start()
        if reader.is_alive():
            reader.join(0 if self._stop.is_set() else 120)

    def _read(self) -> None:
        try:
            answer = http.client.HTTPResponse(self.sock)
            answer.begin()
            self.body = answer.read()
            self.status, self.elapsed = answer.status, time.monotonic() - self.started
        except (OSError, http.client.HTTPException):
            pass
