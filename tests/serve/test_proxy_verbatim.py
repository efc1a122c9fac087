"""What the upstream receives, byte for byte, against the reference weave of the same requests.

A history the lazy weaver passes through goes upstream as the client sent it (no re-render); once the
budget forces a cut, the body is rendered as before. Either way it must equal, after rendering, what
a ContextWeaver fed the same steps returns: real `contextweaver serve` processes (weaving processes,
SQLite files on disk) and a loopback upstream that records the raw bytes it got.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from contextweaver.config import WeaverConfig
from contextweaver.serve import read_conversation
from contextweaver.serve.gate.payload import parse_body
from contextweaver.weaver import ContextWeaver
from tests.serve.processes import serve_process

ANSWER = {"id": "x", "object": "chat.completion", "model": "m", "choices": [{"index": 0, "finish_reason": "stop",
          "message": {"role": "assistant", "content": "ok"}}]}  # fmt: skip


@contextmanager
def recording_upstream() -> Iterator[tuple[str, list[bytes]]]:
    received: list[bytes] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            received.append(self.rfile.read(int(self.headers["content-length"])))
            data = json.dumps(ANSWER).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", received
    finally:
        server.shutdown()
        server.server_close()


def history(steps: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You fix bugs."},
                                      {"role": "user", "content": "Fix the parser in src/p.py"}]  # fmt: skip
    for i in range(1, steps + 1):
        call = {"id": f"c{i}", "type": "function",
                "function": {"name": "bash", "arguments": json.dumps({"command": f"cat src/m{i}.py"})}}  # fmt: skip
        output = "\n".join(f"def f{i}_{j}(x):  # line {j} of module {i}" for j in range(40))
        if i == 5:
            output += "\x00 a NUL, cleaned by the proxy"
        messages += [{"role": "assistant", "content": f"Looking at m{i}.", "tool_calls": [call]},
                     {"role": "tool", "tool_call_id": f"c{i}", "content": output}]  # fmt: skip
    return messages


def bodies(steps: int) -> Iterator[bytes]:
    """Each request of the run, in an unusual but valid JSON layout; one ends on a pending call."""
    messages = history(steps)
    for k in range(1, steps + 1):
        yield json.dumps({"model": "m", "messages": messages[: 2 + 2 * k]}, indent=1).encode()
        if k == 3:
            yield json.dumps({"model": "m", "messages": messages[: 3 + 2 * k]}, indent=1).encode()


def reference(steps: int, budget: int | None) -> list[bytes]:
    """Today's rendering of every request: the weaver's context, then the pending tail, dumped."""
    weaver, stored, out = ContextWeaver(WeaverConfig()), 0, []
    for body in bodies(steps):
        payload = parse_body(body)
        conversation = read_conversation(payload["messages"])
        if not stored:
            weaver.begin(conversation.root)
        for step in conversation.steps[stored:]:
            weaver.add_step(step)
        stored = max(stored, len(conversation.steps))
        payload["messages"] = [*weaver.context(budget).messages, *conversation.pending]
        out.append(json.dumps(payload, ensure_ascii=False, allow_nan=False).encode())
    return out


SAME_HINT = f"recall_hint={json.dumps(WeaverConfig().recall_hint)}"
"""The proxy's recall hint set to the library's default, which the reference weaves with (the proxy's own
names its port and the session's capability: tests/serve/test_proxy_recall.py)."""


def run(tmp: Path, steps: int, *args: str, restart_at: int | None = None) -> tuple[list[bytes], list[bytes]]:
    """The requests sent and the bodies the upstream got; `restart_at`: a new proxy on the same store
    from that request on."""
    sent = list(bodies(steps))
    parts = [sent] if restart_at is None else [sent[:restart_at], sent[restart_at:]]
    store = ("--store", str(tmp / "sessions.db"), "-c", SAME_HINT)
    with recording_upstream() as (upstream, received):
        for part in parts:
            with serve_process(tmp, upstream, *args, *store) as proxy:
                for body in part:
                    answer = httpx.post(f"{proxy.url}/v1/chat/completions", content=body, timeout=60,
                                        headers={"content-type": "application/json", "x-contextweaver-session": "s"})  # fmt: skip
                    assert answer.status_code == 200, answer.text
    return sent, received


def rendered(raw: bytes) -> bytes:
    return json.dumps(json.loads(raw), ensure_ascii=False, allow_nan=False).encode()


@pytest.mark.slow
def test_a_history_under_the_mark_goes_upstream_as_sent_and_equals_the_reference(tmp_path: Path) -> None:
    sent, received = run(tmp_path, 8)
    expected = reference(8, None)
    assert [rendered(raw) for raw in received] == expected
    verbatim = [raw == body for raw, body in zip(received, sent, strict=True)]
    assert verbatim.count(False) == 4  # the requests holding the escaped NUL (steps 5-8) were cleaned
    assert all(verbatim[:5]) and b"\\u0000" in sent[5] and b"\\u0000" not in received[5]


@pytest.mark.slow
def test_after_a_cut_the_rendered_body_is_byte_identical_to_the_reference(tmp_path: Path) -> None:
    sent, received = run(tmp_path, 12, "--budget", "2500")
    expected = reference(12, 2500)
    assert len(received) == len(expected) == len(sent)
    cut = next(
        i for i, raw in enumerate(received) if json.loads(raw)["messages"] != json.loads(sent[i])["messages"]
    )
    assert 0 < cut < len(sent) - 1  # passed through at first, woven down later
    assert received[:cut] == sent[:cut]
    assert received[cut:] == expected[cut:]
    assert [rendered(raw) for raw in received[:cut]] == expected[:cut]


def rebuilt(body: bytes, budget: int) -> bytes:
    """The request as a weaver rebuilt from its steps alone (no cut kept) would render it."""
    payload = parse_body(body)
    conversation = read_conversation(payload["messages"])
    weaver = ContextWeaver(WeaverConfig())
    weaver.begin(conversation.root)
    for step in conversation.steps:
        weaver.add_step(step)
    payload["messages"] = [*weaver.context(budget).messages, *conversation.pending]
    return json.dumps(payload, ensure_ascii=False, allow_nan=False).encode()


@pytest.mark.slow
def test_a_restarted_proxy_sends_the_bytes_it_would_have_sent(tmp_path: Path) -> None:
    """The lazy cut is kept in the store: restarted after a cut, the proxy goes on from the frozen
    prefix, byte-identical to the reference that never restarted (and not cutting anew)."""
    steps, budget = 18, 8000
    expected, sent = reference(steps, budget), list(bodies(steps))
    restart = next(i for i, body in enumerate(sent) if rebuilt(body, budget) != expected[i])
    _, received = run(tmp_path, steps, "--budget", str(budget), restart_at=restart)
    assert received[restart:] == expected[restart:]  # past the cut: rendered, byte for byte
    assert [rendered(raw) for raw in received[:restart]] == expected[:restart]
