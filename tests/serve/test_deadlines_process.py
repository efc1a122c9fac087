"""Deadlines of a real `contextweaver serve` end in the answers a client can act on (issue 44).

--timeout is a total deadline for the upstream's answer (it was per read: an upstream dripping a byte
at a time held a request 15 s under --timeout 3), and a request cut by --shutdown-timeout is a 503
to retry, not a 500."""

from __future__ import annotations

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
from tests.serve.processes import CLI, serve_process
from tests.serve.test_proxy_limits import slow_upstream

TOKEN = "proxy-token-0123456789abcdef"
pytestmark = [pytest.mark.skipif(not CLI.exists(), reason="the contextweaver script is not installed"),
              pytest.mark.slow]  # fmt: skip
HEADERS = {"x-contextweaver-token": TOKEN, "authorization": "Bearer sk-c", "content-type": "application/json"}
BODY = json.dumps({"model": "m", "messages": task("deadline")})
ANSWER = b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": "late"}}]}'


@contextmanager
def dripping_upstream(part: str) -> Iterator[int]:
    """An upstream that sends its answer's `part` ("head" or "body") a byte every 0.5 s, for about 12 s."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n" % len(
                    ANSWER
                )
                slow, fast = (head, b"\r\n" + ANSWER) if part == "head" else (head + b"\r\n", ANSWER)
                try:
                    conn.sendall(slow[:-24] if part == "head" else slow)
                    for byte in (slow[-24:] if part == "head" else b"") + fast:
                        if stop.wait(0.5):
                            return
                        conn.sendall(bytes([byte]))
                except OSError:
                    pass  # the proxy gave up on it

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        listener.close()


@pytest.mark.parametrize("part", ["head", "body"])
def test_an_upstream_dripping_its_answer_is_a_504_at_the_timeout(tmp_path: Path, part: str) -> None:
    with (
        dripping_upstream(part) as port,
        serve_process(tmp_path, f"http://127.0.0.1:{port}/v1", "--timeout", "2", "--weaving-processes", "0",
                      token=TOKEN) as proxy,
    ):  # fmt: skip
        answer = httpx.post(f"{proxy.url}/v1/chat/completions", content=BODY, headers=HEADERS, timeout=60)
    assert answer.status_code == 504, answer.text  # was 200 once the last byte came, ~12 s later
    assert answer.json()["error"]["code"] == "upstream_timeout"


def test_a_request_cut_by_the_shutdown_deadline_is_a_503(tmp_path: Path) -> None:
    results: list[httpx.Response] = []
    with (
        slow_upstream(30.0) as upstream,
        serve_process(tmp_path, f"http://127.0.0.1:{upstream['port']}/v1", "--shutdown-timeout", "1",
                      "--weaving-processes", "0", token=TOKEN) as proxy,
    ):  # fmt: skip
        thread = threading.Thread(target=lambda: results.append(httpx.post(
            f"{proxy.url}/v1/chat/completions", content=BODY, headers=HEADERS, timeout=60)))  # fmt: skip
        thread.start()
        while upstream["received"] < 1:
            time.sleep(0.05)
        proxy.process.terminate()
        proxy.process.wait(30)
        thread.join(30)
    assert results and results[0].status_code == 503, results and results[0].text  # was uvicorn's bare 500
    assert results[0].json()["error"]["code"] == "shutting_down" and "retry-after" in results[0].headers
    log = proxy.log()
    assert "503 for session -: proxy shutting_down" in log and "Traceback" not in log, log[-3000:]
