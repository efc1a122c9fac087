"""Bytes and requests in flight are bounded on a real `contextweaver serve`: 503 with Retry-After beyond them."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.serve.harness import task
from tests.serve.processes import CLI, Proxy, serve_process
from tests.serve.test_proxy_limits import slow_upstream

TOKEN = "proxy-token-0123456789abcdef"
pytestmark = pytest.mark.skipif(not CLI.exists(), reason="the contextweaver script is not installed")
HEADERS = {
    "x-contextweaver-token": TOKEN,
    "authorization": "Bearer sk-caller",
    "content-type": "application/json",
}
MB = 1024 * 1024


def body(marker: str, pad: int = 0) -> bytes:
    return json.dumps({"model": "m", "messages": task(marker), "metadata": {"pad": "x" * pad}}).encode()


def caller(name: str) -> dict[str, str]:
    """HEADERS of another caller (its own key): one caller holds at most half the request slots."""
    return {**HEADERS, "authorization": f"Bearer sk-{name}"}


def in_flight(proxy: Proxy) -> dict[str, int]:
    health = httpx.get(f"{proxy.url}/contextweaver/health", headers=proxy.auth, timeout=10)
    return dict(health.json()["in_flight"])


@contextmanager
def one_held(proxy: Proxy) -> Iterator[None]:
    """One small request held in flight (the upstream answers it after 3 s) for the block."""
    thread = threading.Thread(target=lambda: httpx.post(f"{proxy.url}/v1/chat/completions", content=body("held"),
                                                        headers=HEADERS, timeout=30))  # fmt: skip
    thread.start()
    deadline = time.monotonic() + 10
    while in_flight(proxy)["requests"] < 1:
        assert time.monotonic() < deadline, "the held request never arrived"
        time.sleep(0.02)
    try:
        yield
    finally:
        thread.join()


@pytest.fixture
def proxy(tmp_path: Path) -> Iterator[Proxy]:
    with slow_upstream(3.0) as upstream, serve_process(
        tmp_path, f"http://127.0.0.1:{upstream['port']}/v1", "--max-in-flight-mb", "1", "--max-in-flight", "2",
        "--weaving-processes", "1", token=TOKEN,
    ) as proxy:  # fmt: skip
        yield proxy


@pytest.mark.slow
def test_a_body_past_the_bytes_in_flight_is_a_503_before_it_is_read(proxy: Proxy) -> None:
    port = int(proxy.url.rsplit(":", 1)[1])
    with one_held(proxy), socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        head = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                f"x-contextweaver-token: {TOKEN}\r\nContent-Length: {2 * MB}\r\n\r\n")  # fmt: skip
        sock.sendall(head.encode())  # and not one byte of the body
        answer = http.client.HTTPResponse(sock)
        answer.begin()
        error = json.loads(answer.read())["error"]
    assert answer.status == 503, error
    assert answer.getheader("retry-after") == "2"
    assert error["code"] == "over_capacity", error
    assert in_flight(proxy)["refused"] == 1


@pytest.mark.slow
def test_each_wire_refuses_in_its_own_shape_and_a_small_request_still_passes(proxy: Proxy) -> None:
    with one_held(proxy):
        chat = httpx.post(f"{proxy.url}/v1/chat/completions", content=body("big", 2 * MB), headers=HEADERS)
        messages = httpx.post(f"{proxy.url}/v1/messages", content=body("big", 2 * MB), headers=HEADERS)
        small = httpx.post(  # another caller: one caller holds at most half the request slots
            f"{proxy.url}/v1/chat/completions", content=body("small"), headers=caller("small"), timeout=30
        )
    assert chat.status_code == 503 and chat.json()["error"]["code"] == "over_capacity", chat.text
    assert chat.headers["retry-after"] == "2"
    assert messages.status_code == 503 and messages.json()["type"] == "error", messages.text
    assert messages.json()["error"]["type"] == "api_error"
    assert small.status_code == 200, small.text
    alone = httpx.post(
        f"{proxy.url}/v1/chat/completions", content=body("big", 2 * MB), headers=HEADERS, timeout=30
    )
    assert alone.status_code == 200, alone.text  # nothing else in flight: a body under --max-body-mb passes
    assert in_flight(proxy)["requests"] == 0 and in_flight(proxy)["bytes"] == 0
    log = proxy.log()  # each refusal is one line an operator can act on
    assert "POST /v1/messages: 503 for session -: proxy over_capacity: the proxy is at its limit" in log


@pytest.mark.slow
def test_a_chunked_body_counts_as_it_arrives(proxy: Proxy) -> None:
    def chunks() -> Iterator[bytes]:
        data = body("chunked", 2 * MB)
        for start in range(0, len(data), 64 * 1024):
            yield data[start : start + 64 * 1024]

    with one_held(proxy):
        answer = httpx.post(f"{proxy.url}/v1/chat/completions", content=chunks(), headers=HEADERS, timeout=30)
    assert answer.status_code == 503 and answer.json()["error"]["code"] == "over_capacity", answer.text


@pytest.mark.slow
def test_requests_past_the_count_in_flight_are_refused(proxy: Proxy) -> None:
    with one_held(proxy):
        second = threading.Thread(target=lambda: httpx.post(f"{proxy.url}/v1/chat/completions",
                                                            content=body("second"), headers=caller("second"),
                                                            timeout=30))  # fmt: skip
        second.start()
        deadline = time.monotonic() + 10
        while in_flight(proxy)["requests"] < 2:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        third = httpx.post(f"{proxy.url}/v1/chat/completions", content=body("third"), headers=caller("third"))
        second.join()
    assert third.status_code == 503, third.text
    assert "2 requests" in third.json()["error"]["message"]
