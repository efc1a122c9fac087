"""Slow clients cannot take a real `contextweaver serve` down: file limit raised, header deadline, quiet logs."""

from __future__ import annotations

import json
import logging
import resource
import socket
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path

import httpx
import pytest

from contextweaver.serve.gate.server import RepeatLimit
from tests.serve.harness import task
from tests.serve.processes import CLI, serve_process, upstream_process

TOKEN = "proxy-token-0123456789abcdef"
HEADERS = {
    "x-contextweaver-token": TOKEN,
    "authorization": "Bearer sk-holder",
    "content-type": "application/json",
}
SLOW = 1100


@contextmanager
def soft_file_limit(limit: int) -> Iterator[None]:
    """Processes started inside inherit a soft RLIMIT_NOFILE of `limit`; this one gets its own back."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(limit, hard), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def unfinished(port: int, count: int, stack: ExitStack) -> list[socket.socket]:
    """`count` connections that send half a request's headers, then nothing (closed with `stack`)."""
    sockets = []
    for _ in range(count):
        sock = stack.enter_context(socket.create_connection(("127.0.0.1", port), timeout=10))
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        sockets.append(sock)
    return sockets


@pytest.mark.skipif(not CLI.exists(), reason="the contextweaver script is not installed")
@pytest.mark.skipif(
    resource.getrlimit(resource.RLIMIT_NOFILE)[1] < SLOW + 400, reason="hard file limit too low"
)
@pytest.mark.slow
def test_1100_unfinished_headers_do_not_block_a_token_holder(tmp_path: Path) -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    with ExitStack() as stack, soft_file_limit(hard):  # this process holds the 1,100 client ends
        port, _ = stack.enter_context(upstream_process(tmp_path))
        with soft_file_limit(1024):  # the proxy starts at the common default and raises it itself
            proxy = stack.enter_context(serve_process(tmp_path, f"http://127.0.0.1:{port}/v1", token=TOKEN))
        unfinished(int(proxy.url.rsplit(":", 1)[1]), SLOW, stack)
        body = json.dumps({"model": "m", "messages": task("holder")})
        answer = httpx.post(f"{proxy.url}/v1/chat/completions", content=body, headers=HEADERS, timeout=30)
        assert answer.status_code == 200, answer.text
        log = proxy.log()
    assert "Traceback" not in log and len(log) < 20_000, log[-2000:]


@pytest.mark.skipif(not CLI.exists(), reason="the contextweaver script is not installed")
@pytest.mark.slow
def test_a_connection_that_never_finishes_its_headers_is_closed(tmp_path: Path) -> None:
    with (
        upstream_process(tmp_path) as (port, _),
        serve_process(tmp_path, f"http://127.0.0.1:{port}/v1", "--header-timeout", "1") as proxy,
        ExitStack() as stack,
    ):
        (slow,) = unfinished(int(proxy.url.rsplit(":", 1)[1]), 1, stack)
        slow.settimeout(15)
        with suppress(ConnectionResetError):
            assert slow.recv(1024) == b"", "the proxy answered instead of closing"
        served = httpx.post(f"{proxy.url}/v1/chat/completions", content=json.dumps(
            {"model": "m", "messages": task("after")}), headers={"content-type": "application/json"}, timeout=30)  # fmt: skip
        assert served.status_code == 200  # a finished request on a fresh connection is not affected


def test_a_repeated_log_record_is_let_through_a_few_times_then_counted() -> None:
    limit = RepeatLimit(burst=2, window=3600)
    records = [logging.LogRecord("asyncio", logging.ERROR, __file__, 1, "socket.accept() out of system resource",
                                 None, None) for _ in range(10)]  # fmt: skip
    assert [limit.filter(record) for record in records] == [True, True] + [False] * 8
    other = logging.LogRecord("asyncio", logging.ERROR, __file__, 1, "another message", None, None)
    assert limit.filter(other)
    limit.window = -1.0  # the window is over: the next record passes and says how many were dropped
    late = logging.LogRecord("asyncio", logging.ERROR, __file__, 1, "socket.accept() out of system resource",
                             None, None)  # fmt: skip
    assert limit.filter(late) and "8 more like this dropped" in late.getMessage()
