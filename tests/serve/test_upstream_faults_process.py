"""Expected upstream faults through a real `contextweaver serve`: one WARNING line each, no traceback."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.serve.harness import task
from tests.serve.processes import CLI, free_port, serve_process

pytestmark = pytest.mark.skipif(not CLI.exists(), reason="the contextweaver script is not installed")
FIRST_EVENT = b'data: {"choices": [{"index": 0, "delta": {"content": "hal"}}]}\n\n'


@contextmanager
def cutting_upstream() -> Iterator[int]:
    """An upstream that starts an event stream, sends one event and closes mid-body (chunked, unfinished)."""
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data and (chunk := conn.recv(65536)):
                    data += chunk
                if b"\r\n\r\n" not in data:  # the proxy's health probe: a connection and nothing sent
                    continue
                head, _, body = data.partition(b"\r\n\r\n")
                length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length:"))  # fmt: skip
                while len(body) < length:
                    body += conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                             b"transfer-encoding: chunked\r\n\r\n")  # fmt: skip
                conn.sendall(b"%x\r\n%s\r\n" % (len(FIRST_EVENT), FIRST_EVENT))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        server.close()


def stream(url: str) -> tuple[int, bytes]:
    body = {"model": "m", "stream": True, "messages": task("cut")}
    with httpx.stream("POST", url + "/v1/chat/completions", json=body, timeout=30) as answer:
        return answer.status_code, b"".join(answer.iter_raw())


def faults(log: str) -> list[str]:
    return [line for line in log.splitlines() if " WARNING " in line or " ERROR " in line]


@pytest.mark.slow
def test_a_cut_event_stream_is_one_warning_and_ends_with_an_error_event(tmp_path: Path) -> None:
    with cutting_upstream() as port, serve_process(tmp_path, f"http://127.0.0.1:{port}/v1") as proxy:
        status, data = stream(proxy.url)
    assert status == 200 and data.startswith(FIRST_EVENT)
    event = data.rstrip().rsplit(b"\n", 2)
    assert event[-2] == b"event: error", data
    assert json.loads(event[-1].removeprefix(b"data: "))["error"]["code"] == "upstream_broken"
    log = proxy.log()
    assert "Traceback" not in log
    assert len(faults(log)) == 1 and "broke off" in faults(log)[0], faults(log)


@pytest.mark.slow
def test_a_refused_connection_is_one_warning(tmp_path: Path) -> None:
    with serve_process(tmp_path, f"http://127.0.0.1:{free_port()}/v1") as proxy:
        status, data = stream(proxy.url)
    assert status == 502 and json.loads(data)["error"]["code"] == "upstream_unreachable"
    log = proxy.log()
    assert "Traceback" not in log and len(faults(log)) == 1, faults(log)
