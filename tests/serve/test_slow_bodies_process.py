"""Slow request bodies cannot lock other callers out of a real `contextweaver serve` (issue 44).

Bytes count as they arrive, a request takes a slot once its body is in, one owner holds at most half
of the bytes, and a body slower than its deadline is a 408, logged."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.serve.dripping import Dripping
from tests.serve.harness import task
from tests.serve.processes import CLI, Proxy, serve_process, upstream_process
from tests.serve.test_proxy_limits import slow_upstream

TOKEN = "proxy-token-0123456789abcdef"
pytestmark = [pytest.mark.skipif(not CLI.exists(), reason="the contextweaver script is not installed"),
              pytest.mark.slow]  # fmt: skip
MB = 1024 * 1024
HEADERS = {
    "x-contextweaver-token": TOKEN,
    "authorization": "Bearer sk-normal",
    "content-type": "application/json",
}


def port_of(proxy: Proxy) -> int:
    return int(proxy.url.rsplit(":", 1)[1])


def normal_call(proxy: Proxy, marker: str = "normal") -> httpx.Response:
    body = json.dumps({"model": "m", "messages": task(marker)})
    return httpx.post(f"{proxy.url}/v1/chat/completions", content=body, headers=HEADERS, timeout=60)


@pytest.fixture
def proxy(tmp_path: Path) -> Iterator[Proxy]:
    """Defaults for the byte budget (64 MB) and a body deadline of 2 s + 0.05 s per MB (3.6 s for 32 MB)."""
    with upstream_process(tmp_path) as (port, _), serve_process(
        tmp_path, f"http://127.0.0.1:{port}/v1", "--weaving-processes", "1", "--max-in-flight", "4",
        "--body-timeout", "2", "--body-seconds-per-mb", "0.05", token=TOKEN,
    ) as proxy:  # fmt: skip
        yield proxy


def test_two_slow_32_mb_uploads_leave_room_and_get_a_408(proxy: Proxy) -> None:
    with (
        Dripping(port_of(proxy), declared=32 * MB, every=0.5, token=TOKEN, credential="sk-a") as first,
        Dripping(port_of(proxy), declared=32 * MB, every=0.5, token=TOKEN, credential="sk-b") as second,
    ):
        served = normal_call(proxy)  # was a 503 over_capacity: 64 MB declared, not one received
        statuses = first.wait(60), second.wait(60)
    assert served.status_code == 200, served.text
    assert statuses == (408, 408), (first.body, second.body)
    error = json.loads(first.body)["error"]
    assert error["code"] == "body_timeout" and "--body-timeout" in error["message"], error
    log = proxy.log()
    assert log.count("POST /v1/chat/completions: 408 for session -: proxy body_timeout") == 2, log[-3000:]
    assert "Traceback" not in log
    health = httpx.get(f"{proxy.url}/contextweaver/health", headers=proxy.auth, timeout=10).json()[
        "in_flight"
    ]
    assert health["timed_out"] == 2 and health["bytes"] == 0 and health["receiving"] == 0, health


def test_slow_small_bodies_hold_no_request_slot(proxy: Proxy) -> None:
    slow = [
        Dripping(port_of(proxy), declared=4096, every=0.5, token=TOKEN, credential=f"sk-{n}")
        for n in range(6)
    ]
    for one in slow:  # more than --max-in-flight 4
        one.__enter__()
    try:
        served = normal_call(proxy)
        assert [one.wait(60) for one in slow] == [408] * 6
    finally:
        for one in slow:
            one.__exit__(None, None, None)
    assert served.status_code == 200, served.text


def test_a_chunked_body_slower_than_its_deadline_is_a_408(proxy: Proxy) -> None:
    with Dripping(port_of(proxy), declared=None, every=0.5, step=64, token=TOKEN) as slow:
        assert slow.wait(60) == 408, slow.body
    assert json.loads(slow.body)["error"]["code"] == "body_timeout"


def test_one_owner_cannot_hold_more_than_half_the_bytes(tmp_path: Path) -> None:
    """--max-in-flight-mb 2: an owner's 1.5 MB body is refused past 1 MB while another caller is in flight
    (it fit the 2 MB: the old gate let it in, and its body, not JSON, was a 400)."""
    with (
        slow_upstream(3.0) as upstream,
        serve_process(tmp_path, f"http://127.0.0.1:{upstream['port']}/v1", "--max-in-flight-mb", "2",
                      "--weaving-processes", "1", token=TOKEN) as proxy,
        Dripping(port_of(proxy), declared=3 * MB // 2, every=0.2, step=256 * 1024, token=TOKEN) as hog,
    ):  # fmt: skip
        held = normal_call(proxy, "held")  # in flight for 3 s while the hog's body passes 1 MB
        status = hog.wait(60)
    assert held.status_code == 200, held.text
    assert status == 503 and json.loads(hog.body)["error"]["code"] == "over_capacity", hog.body


def test_a_client_hanging_up_mid_body_is_one_info_line(proxy: Proxy) -> None:
    """Was an ERROR with two tracebacks (ClientDisconnect through the route, then uvicorn's)."""
    with Dripping(port_of(proxy), declared=1000, every=0.1, token=TOKEN):
        time.sleep(0.5)  # leaving the block closes the connection mid-body
    deadline = time.monotonic() + 20
    while "499 for session -" not in proxy.log() and time.monotonic() < deadline:
        time.sleep(0.1)
    log = proxy.log()
    assert "INFO POST /v1/chat/completions: 499 for session -: the client closed the connection" in log, log
    assert "Traceback" not in log and " ERROR " not in log, log[-3000:]


def test_stalled_bodies_of_two_callers_do_not_crowd_out_a_third(tmp_path: Path) -> None:
    """Two made-up keys send all of a --max-body-mb body but its last 20 bytes, then a byte a second: together
    they held all of --max-in-flight-mb until their deadline, and every other caller was a 503 (issue 53, D1).
    A body that stalls now holds its bytes only until someone else needs them: it is then the one cut (408)."""
    with serve_process(tmp_path, "http://127.0.0.1:9/v1", "--max-body-mb", "1", "--max-in-flight-mb", "2",
                       "--body-timeout", "60", "--weaving-processes", "0", token=TOKEN) as proxy:  # fmt: skip
        attack = [
            Dripping(
                port_of(proxy),
                declared=MB,
                burst=MB - 20,
                every=1.0,
                token=TOKEN,
                credential=f"sk-made-up-{n}",
            )
            for n in "ab"
        ]
        with attack[0], attack[1]:
            deadline = time.monotonic() + 10
            while in_flight_bytes(proxy) < 2 * MB - 40:
                assert time.monotonic() < deadline, "the attack never held its bytes"
                time.sleep(0.05)
            time.sleep(1.5)  # past the stall window: both bodies lag
            started = time.monotonic()
            honest = honest_call(proxy)
            took = time.monotonic() - started
            statuses = attack[0].wait(10), attack[1].wait(10)
    assert honest.status_code != 503, honest.text  # the upstream is absent: a 502 is the honest answer
    assert took < 5, took
    assert 408 in statuses, (attack[0].body, attack[1].body)
    cut = json.loads(attack[statuses.index(408)].body)["error"]
    assert cut["code"] == "body_stalled" and "another caller" in cut["message"], cut


def in_flight_bytes(proxy: Proxy) -> int:
    health = httpx.get(f"{proxy.url}/contextweaver/health", headers=proxy.auth, timeout=10)
    return int(health.json()["in_flight"]["bytes"])


def honest_call(proxy: Proxy) -> httpx.Response:
    """An honest caller's chat request (1 KB), forwarded to an upstream that is not there."""
    body = json.dumps({"model": "m", "messages": task("honest"), "metadata": {"pad": "x" * 1024}})
    return httpx.post(f"{proxy.url}/v1/chat/completions", content=body, headers=HEADERS, timeout=30)


def steady_upload(port: int, size: int, rate: int, path: str = "/v1/messages") -> tuple[int, bytes, str]:
    """A client that sends its whole body at `rate` bytes a second before it reads the answer (as httpx and
    requests do): the answer's status and body, or 0 and the error that cut its sending."""
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"x-api-key: sk-steady\r\nx-contextweaver-token: {TOKEN}\r\nContent-Length: {size}\r\n\r\n")  # fmt: skip
    piece = rate // 16
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        try:
            sock.sendall(head.encode() + b'{"model": "m", "pad": "')
            sent = 23
            while sent < size:
                chunk = b"x" * min(piece, size - sent)
                sock.sendall(chunk)
                sent += len(chunk)
                time.sleep(1 / 16)
        except OSError as exc:
            return 0, b"", f"{type(exc).__name__} after {sent} of {size} bytes"
        answer = http.client.HTTPResponse(sock)
        answer.begin()
        return answer.status, answer.read(), ""


def test_a_steady_upload_past_its_deadline_reads_its_408(proxy: Proxy) -> None:
    """30 MB at 256 KB/s was cut at its deadline (70 s) mid-send: the client saw a broken pipe, not the 408.
    Scaled down: 2 MB at 256 KB/s (8 s) against a deadline of 2.1 s."""
    status, body, broken = steady_upload(port_of(proxy), 2 * MB, 256 * 1024)
    assert not broken, broken
    assert status == 408, body
    error = json.loads(body)
    assert error["type"] == "error" and "message" in error["error"], error  # Anthropic's shape
    assert "--body-seconds-per-mb" in error["error"]["message"], error


def test_one_keys_long_requests_leave_request_slots_to_another_key(tmp_path: Path) -> None:
    """One key's 64 long requests took every slot of --max-in-flight 64 and every other key got a 503: there
    was a per-caller share of bytes, none of request slots. Scaled down: --max-in-flight 4."""
    with (
        slow_upstream(3.0) as upstream,
        serve_process(tmp_path, f"http://127.0.0.1:{upstream['port']}/v1", "--max-in-flight", "4",
                      "--weaving-processes", "1", token=TOKEN) as proxy,
    ):  # fmt: skip
        statuses: list[int] = []
        hog = [threading.Thread(target=lambda n=n: statuses.append(normal_call(proxy, f"hog-{n}").status_code))
               for n in range(4)]  # fmt: skip
        for thread in hog:
            thread.start()
        deadline = time.monotonic() + 10
        while upstream["received"] < 2:
            assert time.monotonic() < deadline, "the key's requests never reached the upstream"
            time.sleep(0.02)
        time.sleep(0.3)
        other = httpx.post(f"{proxy.url}/v1/chat/completions", timeout=30,
                           content=json.dumps({"model": "m", "messages": task("other")}),
                           headers={**HEADERS, "authorization": "Bearer sk-other"})  # fmt: skip
        for thread in hog:
            thread.join()
    assert other.status_code == 200, other.text
    assert sorted(statuses) == [200, 200, 503, 503], statuses
