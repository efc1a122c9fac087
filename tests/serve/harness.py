"""Run the proxy for real (uvicorn on a free loopback port, in a thread) and a scripted agent loop."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from contextweaver.config import WeaverConfig
from contextweaver.serve import ProxySettings, SessionManager, create_app
from contextweaver.serve.sessions.session_bytes import DEFAULT_BOUND
from contextweaver.store import Store
from contextweaver.testing.fake_server import Reply, Request

PER_STEP = WeaverConfig(mode="per_step")
"""The proxy tests check weaving itself: every context woven anew, so old outputs are compressed even
without a budget (the default lazy mode passes an unbudgeted history through unchanged)."""


@contextmanager
def running_proxy(
    store: Store, upstream: str, config: WeaverConfig | None = None, **settings: Any
) -> Iterator[tuple[str, SessionManager]]:
    """The proxy's base URL (with /v1) and its session manager, until the block ends."""
    manager = SessionManager(store, config or PER_STEP, budget=settings.pop("budget", None),
                             cache_bytes=settings.pop("cache_bytes", DEFAULT_BOUND))  # fmt: skip
    app = create_app(ProxySettings(upstream=upstream, **settings), manager)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the proxy did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1", manager
    finally:
        server.should_exit = True
        thread.join(timeout=20)
        sock.close()


def tool_call_reply(request: Request) -> Reply:
    """An upstream that asks for one bash call per turn, named after the request's marker and length."""
    messages = request.body.get("messages") or []
    marker = next((m["content"] for m in messages if m.get("role") == "user"), "")[-12:]
    n = len(messages)
    call = {
        "id": f"call_{n}",
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": f"cat file_{n}.py  # {marker}"})},
    }
    body = {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": 1700000000,
        "model": request.body.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": f"Looking at file_{n}.", "tool_calls": [call]},
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    return Reply(body=body)


def run_tool(arguments: str, marker: str, lines: int = 30) -> str:
    """A deterministic stand-in for the agent's shell: output that names the file and the session."""
    command = json.loads(arguments)["command"]
    name = command.split()[1]
    return "\n".join(f"{name}:{i}: def fn_{i}(): return '{marker}'" for i in range(lines))


def task(marker: str) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are a coding agent. Call bash once per turn."},
        {"role": "user", "content": f"Fix the failing test in the repository. Session marker {marker}"},
    ]
