"""Abandoned requests free the upstream, a full disk is a 503, loaded sessions are bounded by bytes."""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from contextweaver.config import WeaverConfig
from contextweaver.serve import SessionManager, read_conversation
from contextweaver.store.sqlite import SQLiteStore
from contextweaver.testing.fake_server import FakeLLMServer
from tests.serve.harness import running_proxy, task, tool_call_reply


@contextmanager
def slow_upstream(delay: float) -> Iterator[dict[str, int]]:
    """An upstream that answers after `delay` seconds, counting callers that hung up before it did."""
    counts = {"received": 0, "abandoned": 0}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            with lock:
                counts["received"] += 1
            deadline = time.monotonic() + delay
            while time.monotonic() < deadline:
                readable, _, _ = select.select([self.connection], [], [], 0.05)
                if readable and self.connection.recv(1, socket.MSG_PEEK) == b"":  # the proxy closed it
                    with lock:
                        counts["abandoned"] += 1
                    return
            body = json.dumps(
                {"choices": [{"index": 0, "message": {"role": "assistant", "content": "late"}}]}
            )
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body.encode())

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    counts["port"] = server.server_address[1]
    try:
        yield counts
    finally:
        server.shutdown()
        server.server_close()


def test_a_client_that_gives_up_cancels_the_upstream_call(tmp_path: Path) -> None:
    """Eight callers hang up once their calls reached the upstream (not after a fixed timeout, which a
    loaded machine can outlast before the call goes out): every upstream call is cancelled."""
    with slow_upstream(30.0) as upstream, running_proxy(SQLiteStore(tmp_path / "s.db"),
                                                        f"http://127.0.0.1:{upstream['port']}/v1") as (url, _):  # fmt: skip
        address = httpx.URL(url)
        callers = []
        for n in range(8):
            body = json.dumps({"model": "m", "messages": task(f"gone-{n}")}).encode()
            caller = socket.create_connection((address.host, address.port))
            caller.sendall(
                f"POST {address.path}/chat/completions HTTP/1.1\r\nHost: {address.host}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            callers.append(caller)
        until(lambda: upstream["received"] == len(callers), 20.0)
        for caller in callers:
            caller.close()
        until(lambda: upstream["abandoned"] == len(callers), 10.0)
    assert upstream["received"] == len(callers), "every caller's call reached the upstream"
    assert upstream["abandoned"] == upstream["received"], (
        "every upstream call was cancelled when its caller left"
    )


def until(condition: Callable[[], bool], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)


def test_a_full_disk_is_a_503_store_unavailable_and_the_proxy_recovers(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    with FakeLLMServer(tool_call_reply) as upstream, running_proxy(store, upstream.base_url) as (url, _):
        headers = {"x-contextweaver-session": "full"}
        messages = task("full")
        answer = httpx.post(
            f"{url}/chat/completions", json={"model": "m", "messages": messages}, headers=headers
        )
        reply = answer.json()["choices"][0]["message"]
        big = [
            *messages,
            reply,
            {"role": "tool", "tool_call_id": reply["tool_calls"][0]["id"], "content": "x" * 400_000},
        ]
        pages = store._db.execute("PRAGMA page_count").fetchone()[0]
        store._db.execute(f"PRAGMA max_page_count = {pages + 2}")  # SQLite's own "database or disk is full"
        full = httpx.post(f"{url}/chat/completions", json={"model": "m", "messages": big}, headers=headers)
        assert full.status_code == 503, full.text
        assert full.json()["error"]["code"] == "store_unavailable"
        store._db.execute("PRAGMA max_page_count = 1073741823")
        again = httpx.post(f"{url}/chat/completions", json={"model": "m", "messages": big}, headers=headers)
        assert again.status_code == 200 and store.step_count("full") == 1


def test_loaded_sessions_are_bounded_by_bytes(tmp_path: Path) -> None:
    manager = SessionManager(
        SQLiteStore(tmp_path / "s.db"), WeaverConfig.model_validate({}), cache_bytes=1_500_000
    )
    for n in range(4):
        messages = [*task(f"big-{n}"), {"role": "assistant", "content": "```bash\ncat log\n```"},
                    {"role": "user", "content": "y" * 200_000}, {"role": "assistant", "content": "done"}]  # fmt: skip
        manager.weave(read_conversation(messages), f"big-{n}")
        assert manager.cached_bytes <= 1_500_000
    assert list(manager._cache) == ["big-3"], "one 200 KB session is ~1 MB loaded: only the newest fits"
