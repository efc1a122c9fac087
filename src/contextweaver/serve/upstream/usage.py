"""The provider's own token counts of one answer, as billed: read from a JSON body or an event stream.

Every wire reports usage its own way. Anthropic: `usage` in the body, or in a stream `message_start`'s
message (input, cache reads and writes) then `message_delta` (cumulative counts, output last);
`input_tokens` excludes the cached parts. OpenAI chat: `usage.prompt_tokens` with
`prompt_tokens_details.cached_tokens` (streamed only in the final chunk when the client asked for
`stream_options.include_usage`). Responses: `usage.input_tokens` with
`input_tokens_details.cached_tokens`, streamed in `response.completed` (or `.incomplete`/`.failed`).
OpenAI counts cached tokens inside the input and bills no cache writes. A reason for a cache miss
comes from Anthropic's `diagnostics.cache_miss_reason` or Responses' `prompt_cache_diagnostics`.

Only the head and the tail of a stream are kept (`Answer`): the usage events open and close it.
Parsing never touches the bytes the caller gets; what cannot be read raises BadUsage, which the
caller counts and notes. A count over MAX_TOKENS is clamped to it, the raw value kept in `Usage.note`.
"""

from __future__ import annotations

import json
import re
import zlib
from dataclasses import dataclass
from typing import Any

from contextweaver.errors import ContextWeaverError
from contextweaver.store.requests import MAX_TOKENS

HEAD_BYTES = 8192
"""A stream's opening bytes kept: Anthropic's `message_start` (no content yet) fits."""
TAIL_BYTES = 16384
"""A stream's closing bytes kept: the usage event (Responses' echoes the request's tools before it)."""
_MARKS = (b'"usage"', b"diagnostics")
_OBJECT = re.compile(
    rb'"(usage|diagnostics|prompt_cache_diagnostics)"\s*:\s*(\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\})'
)
"""A usage or diagnostics object (one level of nesting) in an event whose start the gap cut off."""
MAX_DECODED = 8 * 1024 * 1024
"""Most bytes a compressed answer is inflated to, only to read its usage (a bomb stops here)."""


class BadUsage(ContextWeaverError, ValueError):
    """A usage object that is there but not readable (wrong types, negative or inconsistent counts)."""


@dataclass(frozen=True)
class Usage:
    """One answer's tokens as billed: `input` at the base price, cache reads and writes, output."""

    input: int
    cache_read: int
    cache_write: int
    output: int
    miss_reason: str | None = None
    note: str | None = None
    """The raw counts that were clamped to MAX_TOKENS."""

    @property
    def prompt(self) -> int:
        return self.input + self.cache_read + self.cache_write


@dataclass(frozen=True)
class Answered:
    """What an answer leaves to read usage from: its status, body (of a stream: head and tail) and encoding."""

    status: int
    data: bytes
    streamed: bool
    encoding: str = ""
    note: str | None = None
    """Why the answer is partial or absent (a stream broken off, a caller gone), for its row."""

    def usage(self, wire: str) -> Usage | None:
        """The answer's usage (None: it reports none); raises BadUsage when it is there but unreadable."""
        data = decoded(self.data, self.encoding) if self.encoding else self.data
        return read_usage(wire, data, streamed=self.streamed)


class Answer:
    """The bytes of an answer that usage is read from: all of a small one, the head and tail of a stream.

    A stream comes in thousands of small chunks: the tail grows to twice its size before its front is
    dropped, so keeping it costs a copy per chunk's bytes, not per chunk."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.size = 0

    def add(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if len(self.head) < HEAD_BYTES:
            room = HEAD_BYTES - len(self.head)
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        if len(self.tail) > 2 * TAIL_BYTES:
            del self.tail[: len(self.tail) - TAIL_BYTES]

    def kept(self) -> bytes:
        """Head and tail; a gap between them is marked by a blank line (no event spans it)."""
        tail = self.tail[-TAIL_BYTES:]
        gap = self.size > len(self.head) + len(tail)
        return bytes(self.head) + (b"\n\n" if gap else b"") + bytes(tail)


def decoded(data: bytes, encoding: str) -> bytes:
    """A copy of a gzip- or deflate-encoded body, inflated to read its usage; other encodings as given."""
    encoding = encoding.strip().lower()
    if encoding not in ("gzip", "x-gzip", "deflate"):
        return data
    try:
        return zlib.decompressobj(wbits=47 if encoding != "deflate" else 15).decompress(data, MAX_DECODED)
    except zlib.error as exc:
        raise BadUsage(f"the {encoding} answer does not inflate: {exc}") from exc


def read_usage(wire: str, data: bytes, *, streamed: bool) -> Usage | None:
    """The answer's usage on `wire` ("chat", "anthropic", "responses"); None when it reports none."""
    found = _events(data) if streamed else _body(data)
    usage: dict[str, Any] = {}
    diagnostics: dict[str, Any] = {}
    for event in found:
        for holder in (event, event.get("message"), event.get("response")):
            if not isinstance(holder, dict):
                continue
            if isinstance(holder.get("usage"), dict):  # later (cumulative) counts win
                usage.update((k, v) for k, v in holder["usage"].items() if v is not None)
            for name in ("diagnostics", "prompt_cache_diagnostics"):
                if isinstance(holder.get(name), dict):
                    diagnostics = holder[name]
    if not usage:
        return None
    return _normalized(wire, usage, miss_reason(diagnostics))


def _body(data: bytes) -> list[dict[str, Any]]:
    if not any(mark in data for mark in _MARKS):
        return []
    try:
        body = json.loads(data)
    except ValueError as exc:
        raise BadUsage(f"the answer is not JSON: {exc}") from exc
    return [body] if isinstance(body, dict) else []


def _events(data: bytes) -> list[dict[str, Any]]:
    """The `data:` events that may hold usage. The event the head/tail gap cut (Responses' completed
    event repeats a long output before its usage) gives the objects found whole in its tail."""
    events = []
    for line in data.split(b"\n"):
        if not any(mark in line for mark in _MARKS):
            continue
        try:
            event = json.loads(line[5:]) if line.startswith(b"data:") else None
        except ValueError:
            event = None
        events.append(event if isinstance(event, dict) else _cut_event(line))
    return events


def _cut_event(line: bytes) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name, raw in _OBJECT.findall(line):  # the last of each name: an output may quote one before
        try:
            found[name.decode()] = json.loads(raw)
        except ValueError:
            continue
    return found


def _count(usage: dict[str, Any], clamped: list[str], *path: str) -> int:
    """The count at `path` (0 when absent), at most MAX_TOKENS: a larger one is noted in `clamped`."""
    value: Any = usage
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    if value is None:
        return 0
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise BadUsage(f"usage {'.'.join(path)} is {str(repr(value))[:60]}, not a count")
    if value > MAX_TOKENS:
        clamped.append(f"{'.'.join(path)} reported as {str(value)[:40]}")
        return MAX_TOKENS
    return value


def _normalized(wire: str, usage: dict[str, Any], reason: str | None) -> Usage:
    clamped: list[str] = []
    if wire == "anthropic":
        counts = [_count(usage, clamped, name) for name in ("input_tokens", "cache_read_input_tokens",
                                                            "cache_creation_input_tokens", "output_tokens")]  # fmt: skip
    else:
        names = ("input_tokens", "input_tokens_details", "output_tokens") if wire == "responses" else (
            "prompt_tokens", "prompt_tokens_details", "completion_tokens")  # fmt: skip
        prompt, cached = _count(usage, clamped, names[0]), _count(usage, clamped, names[1], "cached_tokens")
        if cached > prompt:
            raise BadUsage(f"usage reports {cached} cached of {prompt} input tokens")
        counts = [prompt - cached, cached, 0, _count(usage, clamped, names[2])]
    note = f"{', '.join(clamped)}: clamped to {MAX_TOKENS}" if clamped else None
    return Usage(counts[0], counts[1], counts[2], counts[3], reason, note)


def miss_reason(diagnostics: dict[str, Any]) -> str | None:
    """Why the provider's cache missed, when it says: Anthropic's `cache_miss_reason.type`, Responses'
    `reason` of a `cache_miss` diagnostic."""
    anthropic = diagnostics.get("cache_miss_reason")
    if isinstance(anthropic, dict) and isinstance(anthropic.get("type"), str):
        return anthropic["type"][:80]
    if diagnostics.get("type") == "cache_miss" and isinstance(diagnostics.get("reason"), str):
        return str(diagnostics["reason"])[:80]
    return None
