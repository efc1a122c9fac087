"""A deterministic stand-in for a model provider: the answers of `contextweaver fake-upstream` and the demo.

It answers the OpenAI chat, Responses and Anthropic Messages wires (fake_server.py), the same call for
the same request: with a tool call when the request offers tools, with text otherwise. Its usage reports
a prefix cache as providers do: the leading messages a previous request already sent are cache reads, so
the dashboard's costs behave as with a real provider (a cut misses the cache once). The call it makes
is the next in a short plan (read a module, grep it, run its tests), numbered after the newest call the
request holds, so a history cut by a proxy still continues where it stopped. When the request carries a
working-state note with a recall command and no recall is in sight, it calls that command once: the
demo's agent runs it, and the proxy's recall answers.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from typing import Any

from contextweaver.testing import fake_wire
from contextweaver.testing.fake_server import FakeLLMServer, Reply, Request
from contextweaver.tokens import count_message, count_text

PLAN = (
    "cat src/shop/module_{k}.py",
    "grep -n 'def ' src/shop/module_{k}.py",
    "python -m pytest -q tests/test_module_{k}.py",
)
"""The calls the fake model makes in turn; {k} counts its calls."""
CALL_ID = re.compile(r"(?:call|toolu|fc)_(\d+)")
RECALL = re.compile(r"curl -s (http://\S+?/contextweaver/recall/\w+/)N")
NOTE_MARK = "[ContextWeaver"


def command_at(k: int) -> str:
    return PLAN[k % len(PLAN)].format(k=k // len(PLAN) + 1)


def texts(request: Request) -> list[str]:
    """Every piece of text the request holds, in order (messages, Responses input items, Anthropic blocks)."""
    items = request.body.get("input") if isinstance(request.body.get("input"), list) else request.messages
    found = []
    for item in items or []:
        if isinstance(item, dict):
            found.append(json.dumps(item, ensure_ascii=False))
    return found


def next_call(request: Request) -> tuple[int, str]:
    """The number of the call to make and its command: a recall when a note offers one, else the plan's next."""
    held = texts(request)
    numbers = [int(n) for text in held for n in CALL_ID.findall(text)]
    k = max(numbers, default=-1) + 1
    note = next((text for text in held if NOTE_MARK in text), None)
    recall = RECALL.search(note.replace("\\n", "\n")) if note else None
    recalled = any("/contextweaver/recall/" in text and NOTE_MARK not in text for text in held)
    if recall is not None and not recalled:
        omitted = re.search(r"#(\d+)", note[note.index(NOTE_MARK) :]) if note else None
        return k, f"curl -s {recall.group(1)}{omitted.group(1) if omitted else 1}"
    return k, command_at(k)


def tool_of(request: Request) -> tuple[str, str] | None:
    """The first tool the request offers, and the name of its first argument ("command" by default)."""
    for tool in request.body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        function = tool.get("function")
        spec: dict[str, Any] = function if isinstance(function, dict) else tool
        name = spec.get("name")
        schema = spec.get("parameters") or spec.get("input_schema") or {}
        properties = list((schema.get("properties") or {}) if isinstance(schema, dict) else {})
        if isinstance(name, str):
            return name, properties[0] if properties else "command"
    return None


class PrefixCache:
    """Which message prefixes were sent before (a chain of digests), bounded: cleared when full."""

    def __init__(self, limit: int = 200_000) -> None:
        self.seen: set[str] = set()
        self.limit = limit
        self.lock = threading.Lock()

    def read(self, pieces: list[tuple[str, int]]) -> int:
        """Tokens of the leading pieces (text, tokens) some earlier request sent too (then all are remembered)."""
        chain, cached, hit = hashlib.sha256(), 0, True
        with self.lock:
            if len(self.seen) > self.limit:
                self.seen.clear()
            for piece, tokens in pieces:
                chain.update(piece.encode())
                digest = chain.hexdigest()
                hit = hit and digest in self.seen
                cached += tokens if hit else 0
                self.seen.add(digest)
        return cached


class FakeUpstream:
    """The answers, with one prefix cache across the requests of the server."""

    def __init__(self) -> None:
        self.cache = PrefixCache()

    def __call__(self, request: Request) -> Reply:
        """The deterministic answer on the request's wire (see the module's docstring)."""
        wire = fake_wire.wire_of(request.path)
        model = str(request.body.get("model") or "fake-upstream")
        tool = tool_of(request)
        held = texts(request)
        if wire == "responses":
            pieces = [(text, count_text(text)) for text in held]
        else:
            pieces = [(json.dumps(m, sort_keys=True), count_message(m)) for m in request.messages]
        prompt = sum(tokens for _, tokens in pieces)
        cached = self.cache.read(pieces)
        if tool is None or (wire is None and request.body.get("stream")):
            return Reply(text=f"fake-upstream: {len(held)} messages read, nothing to do")
        k, command = next_call(request)
        name, argument = tool
        arguments = json.dumps({argument: command})
        if wire == "messages":
            block = {"type": "tool_use", "id": f"toolu_{k}", "name": name, "input": {argument: command}}
            body = fake_wire.anthropic_message(model, [block], input_tokens=prompt - cached)
            body["usage"]["cache_read_input_tokens"] = cached
            return Reply(body=body)
        if wire == "responses":
            item = {"type": "function_call", "call_id": f"fc_{k}", "name": name, "arguments": arguments}
            body = fake_wire.responses_object(model, [item], input_tokens=prompt)
            body["usage"]["input_tokens_details"]["cached_tokens"] = cached
            return Reply(body=body)
        call = {"id": f"call_{k}", "type": "function", "function": {"name": name, "arguments": arguments}}
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        output = count_text(arguments)
        return Reply(body={
            "id": f"chatcmpl-fake{k}", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": output, "total_tokens": prompt + output,
                      "prompt_tokens_details": {"cached_tokens": cached}},
        })  # fmt: skip


def fake_upstream(port: int = 0, host: str = "127.0.0.1") -> FakeLLMServer:
    """The deterministic upstream on `host:port` (0: a free port), not yet started (a context manager)."""
    return FakeLLMServer(FakeUpstream(), model="fake-upstream", host=host, port=port, record=False)
