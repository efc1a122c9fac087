"""The wire fuzzer's shapes through the whole route of a real `contextweaver serve` (issue 44).

tests/properties/test_wire_payloads.py checks the parsers alone; here the same generated histories, and
header values with any byte HTTP allows, go over one keep-alive connection to a proxy in front of the
scripted upstream: never a 500, and the connection survives each answer."""

from __future__ import annotations

import http.client
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.properties.test_wire_payloads import history, well_formed
from tests.serve.harness import task
from tests.serve.processes import CLI, Proxy, serve_process, upstream_process

TOKEN = "proxy-token-0123456789abcdef"
pytestmark = [pytest.mark.skipif(not CLI.exists(), reason="the contextweaver script is not installed"),
              pytest.mark.slow]  # fmt: skip
ROUTES = {"chat": ("/v1/chat/completions", "messages"), "anthropic": ("/v1/messages", "messages"),
          "responses": ("/v1/responses", "input")}  # fmt: skip
HEADER_BYTES = st.binary(max_size=24).map(lambda raw: bytes(b for b in raw if b == 9 or 32 <= b != 127))
"""What h11 lets through in a header value: tab, printable ASCII and every byte from 0x80."""
FUZZ = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])  # fmt: skip


class KeptAlive:
    """One HTTP/1.1 connection to the proxy; `post` fails the test if the proxy closed it or answered 5xx."""

    def __init__(self, proxy: Proxy) -> None:
        self.connection = http.client.HTTPConnection(
            "127.0.0.1", int(proxy.url.rsplit(":", 1)[1]), timeout=60
        )
        self.connection.connect()
        self.sock = self.connection.sock

    def post(self, path: str, body: bytes, extra: dict[str, bytes] | None = None) -> int:
        headers: dict[str, str | bytes] = {"content-type": "application/json", "x-contextweaver-token": TOKEN,
                                           "authorization": "Bearer sk-fuzz", **(extra or {})}  # fmt: skip
        self.connection.request("POST", path, body=body, headers=headers)  # type: ignore[arg-type]
        answer = self.connection.getresponse()
        text = answer.read()
        assert answer.status < 500, (answer.status, text[:500], body[:500])
        assert self.connection.sock is self.sock and not answer.will_close, "the proxy closed the connection"
        return answer.status


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    tmp = tmp_path_factory.mktemp("shapes")
    with (
        upstream_process(tmp) as (port, _),
        serve_process(tmp, f"http://127.0.0.1:{port}/v1", "--weaving-processes", "1", token=TOKEN) as proxy,
    ):
        yield proxy
    assert "Traceback" not in proxy.log(), proxy.log()[-3000:]


@pytest.fixture(scope="module")
def client(proxy: Proxy) -> KeptAlive:
    return KeptAlive(proxy)


def body_of(wire: str, items: list[Any]) -> bytes:
    return json.dumps({"model": "m", ROUTES[wire][1]: items}).encode()


@pytest.mark.parametrize("wire", sorted(ROUTES))
def test_generated_histories_never_500_nor_drop_the_connection(client: KeptAlive, wire: str) -> None:
    @FUZZ
    @given(items=history | well_formed(wire))
    def check(items: list[Any]) -> None:
        client.post(ROUTES[wire][0], body_of(wire, items))

    check()


@pytest.mark.parametrize(
    "item",
    [{"type": ["message"], "role": "user", "content": "hi"}, {"type": {"a": 1}, "role": "user", "content": "hi"},
     {"type": None, "role": "user", "content": "hi"}, {"type": "message", "role": ["user"], "content": "hi"},
     {"type": "function_call_output", "call_id": {"x": 1}, "output": ["x"]}],
    ids=["type-list", "type-object", "type-null", "role-list", "call-id-object"],
)  # fmt: skip
def test_responses_items_of_the_wrong_shape_are_400s(client: KeptAlive, item: dict[str, Any]) -> None:
    assert client.post("/v1/responses", body_of("responses", [item])) == 400


@FUZZ
@given(title=HEADER_BYTES, agent=HEADER_BYTES)
def test_header_values_of_any_byte_reach_the_upstream_without_a_500(client: KeptAlive, title: bytes,
                                                                     agent: bytes) -> None:  # fmt: skip
    assert client.post("/v1/chat/completions", body_of("chat", task("headers")),
                       {"x-title": title, "user-agent": agent}) == 200  # fmt: skip


@pytest.mark.parametrize(
    "value", ["café".encode(), "café".encode("latin-1"), b"\xff\xfe"], ids=["utf8", "latin1", "ff"]
)
def test_a_non_ascii_header_goes_upstream_as_its_bytes(client: KeptAlive, value: bytes) -> None:
    """Was a 500 after the step was stored, on every retry (httpx encodes str headers as ASCII)."""
    for _ in range(2):  # the retry of a stored step is the same request again
        assert client.post("/v1/chat/completions", body_of("chat", task("cafe")), {"x-title": value}) == 200


def test_an_odd_session_header_is_a_400(client: KeptAlive) -> None:
    extra = {"x-contextweaver-session": "caf\xe9".encode("latin-1")}
    assert client.post("/v1/chat/completions", body_of("chat", task("odd-session")), extra) == 400


def test_the_upstream_got_the_header_bytes(tmp_path: Path) -> None:
    """The fake upstream logs only bodies; this checks the bytes with a one-off listener instead."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        seen: list[bytes] = []

        def answer() -> None:
            conn, _ = listener.accept()
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                seen.append(data)
                body = b'{"choices": []}'
                conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
                             b"connection: close\r\n\r\n%s" % (len(body), body))  # fmt: skip

        thread = threading.Thread(target=answer, daemon=True)
        thread.start()
        port = listener.getsockname()[1]
        with serve_process(
            tmp_path, f"http://127.0.0.1:{port}/v1", "--weaving-processes", "0", token=TOKEN
        ) as own:
            status = KeptAlive(own).post("/v1/chat/completions", body_of("chat", task("bytes")),
                                         {"x-title": "café".encode()})  # fmt: skip
        thread.join(10)
    assert status == 200 and b"\r\nx-title: caf\xc3\xa9\r\n" in seen[0].lower(), seen
