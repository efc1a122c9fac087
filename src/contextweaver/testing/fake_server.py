"""A real local HTTP server that speaks OpenAI chat, Anthropic Messages and OpenAI Responses, for tests.

Reusable by any test that needs an LLM endpoint: pass a `reply` function to script answers, errors
(429, 500), slow replies or garbage bodies; by default it answers memory prompts like the fake model.
On /messages and /responses a dict `body` is the answer object, streamed as that API's events when
the request asks for `stream` (fake_wire.py). A stream can break off after some events (`cut_after`)
or stay open after its last one (`hold`), for a client to hang up before its end.

    with FakeLLMServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x")
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from contextweaver.models.fake_rules import answer
from contextweaver.testing import fake_wire
from contextweaver.tokens import content_text, count_message, count_text


@dataclass
class Reply:
    """What the server sends. `body` (raw) overrides the chat completion built from `text`."""

    text: str = ""
    status: int = 200
    body: bytes | str | dict[str, Any] | None = None
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    usage: dict[str, Any] | None = None
    """The usage of a streamed chat answer's final chunk (default: counted from the request and `text`)."""
    cut_after: int | None = None
    """A stream's events sent before the server breaks off (a chunked body left without its end)."""
    hold: float = 0.0
    """Seconds a stream stays open after its last event."""


@dataclass
class Request:
    """One request as received: path, headers (lower-case names) and the parsed JSON body."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    raw: bytes = b""
    """The body's bytes as received."""

    @property
    def messages(self) -> list[dict[str, Any]]:
        """OpenAI-style messages; Anthropic's top-level `system` becomes the first message."""
        messages = list(self.body.get("messages") or [])
        system = self.body.get("system")
        if system:
            messages.insert(0, {"role": "system", "content": content_text(system)})
        return messages

    @property
    def schema(self) -> dict[str, Any] | None:
        fmt = self.body.get("response_format") or {}
        found = fmt.get("schema") or (fmt.get("json_schema") or {}).get("schema")
        return found if isinstance(found, dict) else None


ReplyFn = Callable[[Request], "Reply | str"]


def default_reply(request: Request) -> Reply:
    """Answer like the fake model: rule-based JSON for memory prompts, a short echo otherwise."""
    prompt = "\n".join(content_text(m.get("content")) for m in request.messages if m.get("role") == "user")
    return Reply(text=answer(prompt, request.schema))


class _Listener(ThreadingHTTPServer):
    request_queue_size = 128
    """Connections waiting to be accepted. The default, 5, overflowed when several proxies sent dozens of
    requests at once on a loaded machine, and a client saw its connection reset (a 502 from the proxy)."""


class FakeLLMServer:
    """ThreadingHTTPServer on 127.0.0.1 with a free port (or the given ones); a context manager; records every
    request (`record=False`: none, for a server that runs for hours)."""

    def __init__(self, reply: ReplyFn | None = None, model: str = "fake-server", *, host: str = "127.0.0.1",
                 port: int = 0, record: bool = True) -> None:  # fmt: skip
        self.record = record
        self.reply = reply or default_reply
        self.model = model
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._httpd = _Listener((host, port), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="fake-llm-server", daemon=True)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        host = str(self._httpd.server_address[0])
        return f"http://{'127.0.0.1' if host in ('0.0.0.0', '') else host}:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL (with /v1)."""
        return f"{self.url}/v1"

    def __enter__(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted (a command's main loop), then release the port."""
        try:
            self._httpd.serve_forever()
        finally:
            self._httpd.server_close()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _record(self, request: Request) -> None:
        if not self.record:
            return
        with self._lock:
            self.requests.append(request)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go in two writes: no 40 ms delayed-ACK stall

            def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read `requests`
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": server.model, "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._send(400, {"error": {"message": "request body is not JSON"}})
                    return
                request = Request(self.path, {k.lower(): v for k, v in self.headers.items()}, body, raw)
                server._record(request)
                if self.path.split("?")[0].endswith("/messages/count_tokens"):
                    self._send(200, {"input_tokens": sum(count_message(m) for m in request.messages)})
                    return
                if not self.path.split("?")[0].endswith(("/chat/completions", "/messages", "/responses")):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                result = server.reply(request)
                reply = Reply(text=result) if isinstance(result, str) else result
                if reply.delay:
                    time.sleep(reply.delay)
                wire = fake_wire.wire_of(self.path)
                if wire and reply.status == 200 and (reply.body is None or isinstance(reply.body, dict)):
                    answer = (
                        reply.body
                        if isinstance(reply.body, dict)
                        else server._wire_body(wire, request, reply.text)
                    )
                    if body.get("stream"):
                        self._stream_events(fake_wire.wire_events(wire, answer), reply)
                    else:
                        self._send(200, answer, reply.headers)
                elif reply.body is not None or reply.status != 200:
                    default = {"error": {"message": f"HTTP {reply.status}", "type": "fake"}}
                    self._send(reply.status, reply.body if reply.body is not None else default, reply.headers)
                elif body.get("stream"):
                    self._stream_events(server._chat_frames(request, reply), reply)
                else:
                    self._send(200, server._openai_body(request, reply.text), reply.headers)

            def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
                data = (
                    payload
                    if isinstance(payload, bytes)
                    else (payload.encode() if isinstance(payload, str) else json.dumps(payload).encode())
                )
                self.send_response(status)
                kind = "application/json" if isinstance(payload, dict) else "text/plain"
                self.send_header("content-type", (headers or {}).get("content-type", kind))
                for name, value in (headers or {}).items():
                    if name.lower() != "content-type":
                        self.send_header(name, value)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream_events(self, frames: Iterator[bytes], reply: Reply) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                chunked = reply.cut_after is not None  # a close-delimited body cannot be seen to break
                if chunked:
                    self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for n, frame in enumerate(frames):
                    if reply.cut_after is not None and n >= reply.cut_after:
                        break  # the connection closes without the chunked body's end
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame) if chunked else frame)
                    self.wfile.flush()
                time.sleep(reply.hold)
                self.close_connection = True

        return Handler

    def _chat_frames(self, request: Request, reply: Reply) -> Iterator[bytes]:
        """A chat completion's stream: the text in pieces, the final chunk (with usage when asked), [DONE]."""
        text = reply.text
        for piece in [text[i : i + 16] for i in range(0, len(text), 16)] or [""]:
            yield b"data: " + json.dumps(self._chunk(request, {"content": piece}, None)).encode() + b"\n\n"
        final = self._chunk(request, {}, "stop")
        if (request.body.get("stream_options") or {}).get("include_usage"):
            final["usage"] = reply.usage if reply.usage is not None else self._usage(request, text)
        yield b"data: " + json.dumps(final).encode() + b"\n\n"
        yield b"data: [DONE]\n\n"

    def _usage(self, request: Request, text: str) -> dict[str, int]:
        prompt = sum(count_message(m) for m in request.messages)
        completion = count_text(text)
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    def _openai_body(self, request: Request, text: str) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.body.get("model", self.model),
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
            ],
            "usage": self._usage(request, text),
        }

    def _chunk(self, request: Request, delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": request.body.get("model", self.model),
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    def _wire_body(self, wire: str, request: Request, text: str) -> dict[str, Any]:
        if wire == "messages":
            return self._anthropic_body(request, text)
        item = {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
        return fake_wire.responses_object(request.body.get("model", self.model), [item])

    def _anthropic_body(self, request: Request, text: str) -> dict[str, Any]:
        usage = self._usage(request, text)
        return {
            "id": f"msg_{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": request.body.get("model", self.model),
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": usage["prompt_tokens"], "output_tokens": usage["completion_tokens"]},
        }
