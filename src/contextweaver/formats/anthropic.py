"""Anthropic Messages content blocks as chat messages with tool calls, and back.

Claude Code transcripts and the proxy's `/v1/messages` both hold Anthropic messages: an assistant
message's `tool_use` blocks are its calls, and the next user message's `tool_result` blocks their
results. Readers and weaving work on OpenAI-shaped chat messages (`tool_calls`, `tool` results),
so `to_chat` adds that shape while keeping every block verbatim: an assistant message keeps its
whole block list as `content` (text, thinking with its signature, tool_use), with `tool_calls`
derived from the tool_use blocks; each tool_result becomes a `tool` message whose content is the
result's own content. `from_chat` is the inverse: a message that weaving left alone comes back
block for block; a compressed result comes back as a tool_result with the placeholder text.

READER reads a recorded request body (or JSON Lines of them) as a run, through the same `to_chat`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from contextweaver.formats.base import Trajectory
from contextweaver.formats.openai import chat_trajectory
from contextweaver.formats.source import Record, Source, record_values
from contextweaver.records import Message

WIRE_KEY = "wire"
"""Marks a chat message made from a top-level request field (`system`), which the field itself carries back."""
FIELDS_KEY = "wire_fields"
"""A message's own fields besides role and content (Claude Code's `output_config`), given back as sent."""


def tool_calls(blocks: Iterable[Any]) -> list[dict[str, Any]]:
    """The tool_use blocks of an assistant message as OpenAI tool calls (arguments as JSON text)."""
    return [
        {
            "id": str(block.get("id", "")),
            "type": "function",
            "function": {
                "name": str(block.get("name", "")),
                "arguments": json.dumps(block.get("input") or {}, ensure_ascii=False),
            },
        }
        for block in blocks
        if isinstance(block, dict) and block.get("type") == "tool_use"
    ]


def to_chat(messages: Sequence[Any], system: Any = None) -> list[Message]:
    """Anthropic `messages` (+ the top-level `system`) as chat messages, blocks kept verbatim."""
    out: list[Message] = []
    if system:
        out.append({"role": "system", "content": system, WIRE_KEY: "system"})
    for message in messages:
        role, content = message.get("role"), message.get("content")
        fields = {k: v for k, v in message.items() if k not in ("role", "content")}
        if role == "assistant":
            chat: Message = {"role": "assistant", "content": content}
            calls = tool_calls(content) if isinstance(content, list) else []
            if calls:
                chat["tool_calls"] = calls
            out.append(chat)
        elif isinstance(content, list) and role != "system":
            results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
            rest = [b for b in content if not (isinstance(b, dict) and b.get("type") == "tool_result")]
            out.extend(_tool_message(block) for block in results)
            if rest or not results:
                out.append({"role": str(role), "content": rest})
        else:
            out.append({"role": str(role), "content": content})
        if fields:
            out[-1][FIELDS_KEY] = fields
    return out


def _tool_message(block: dict[str, Any]) -> Message:
    message: Message = {"role": "tool", "tool_call_id": str(block.get("tool_use_id", "")),
                        "content": block.get("content", "")}  # fmt: skip
    if block.get("is_error"):
        message["is_error"] = True
    return message


def from_chat(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Chat messages back as Anthropic messages; messages of one role in a row become one message.

    Messages marked with WIRE_KEY (the top-level `system`) are left out: the request field carries
    them. A system message inside `messages` (Claude Code sends its environment block so) stays one
    message of its own, where it was. Inside a user message the tool_result blocks come first, as
    the API requires.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.get(WIRE_KEY):
            continue
        if message.get("role") == "system":
            out.append(
                {"role": "system", "content": message.get("content", ""), **message.get(FIELDS_KEY, {})}
            )
            continue
        role = "assistant" if message.get("role") == "assistant" else "user"
        blocks = _blocks(message)
        if out and out[-1]["role"] == role:
            previous = out[-1]
            previous["content"] = _as_blocks(previous["content"]) + blocks
        elif role == "user" and isinstance(message.get("content"), str) and message.get("role") == "user":
            out.append({"role": role, "content": message["content"]})
        else:
            out.append({"role": role, "content": blocks})
        out[-1].update(message.get(FIELDS_KEY, {}))
    for message in out:
        if message["role"] == "user" and isinstance(message["content"], list):
            content = message["content"]
            results = [b for b in content if b.get("type") == "tool_result"]
            message["content"] = results + [b for b in content if b.get("type") != "tool_result"]
    return out


def _as_blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return [{"type": "text", "text": str(content)}] if content else []


def _blocks(message: Message) -> list[dict[str, Any]]:
    content = message.get("content")
    if message.get("role") == "tool":
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.get("tool_call_id", "")}
        if content not in (None, "", []):
            block["content"] = content
        if message.get("is_error"):
            block["is_error"] = True
        return [block]
    if message.get("role") != "assistant" or isinstance(content, list):
        return _as_blocks(content)
    # an assistant message whose text weaving rewrote (trimmed): its calls come from tool_calls
    blocks = _as_blocks(content)
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except (ValueError, RecursionError):
            arguments = {}
        blocks.append({"type": "tool_use", "id": call.get("id", ""), "name": function.get("name", ""),
                       "input": arguments if isinstance(arguments, dict) else {}})  # fmt: skip
    return blocks


BLOCK_TYPES = frozenset(
    {"text", "image", "document", "thinking", "redacted_thinking", "tool_use", "tool_result"}
)


def is_request(value: Any) -> bool:
    """An Anthropic Messages request body: `messages` of user/assistant turns, and either a top-level
    `system` or a content block only this wire has (OpenAI chat has `tool_calls` and `tool` roles)."""
    if not isinstance(value, dict):
        return False
    messages = value.get("messages")
    if not isinstance(messages, list) or not messages:
        return False
    if not all(isinstance(m, dict) and m.get("role") in ("user", "assistant", "system") for m in messages):
        return False
    if any("tool_calls" in m for m in messages):
        return False
    blocks = (b for m in messages if isinstance(m.get("content"), list) for b in m["content"])
    return "system" in value or any(isinstance(b, dict) and b.get("type") in BLOCK_TYPES for b in blocks)


def _request_values(source: Source) -> list[Record] | None:
    """The requests of a file: JSON Lines of them, one request body, or a bare JSON list of messages
    (a request's `messages`, as a script dumps them), read as a request without `system`."""
    if not source.looks_like_jsonl and isinstance(source.document, list):
        return [Record(1, {"messages": source.document})]
    return record_values(source)


class AnthropicReader:
    """A request body sent to `/v1/messages` (as a proxy or an SDK logs it), or JSON Lines of them.

    A request holds the whole conversation so far, so of a log of requests the one with the most
    messages (the last of equals) is the run; the others are its prefixes or side calls (titles).
    """

    name = "anthropic"
    expected = "an Anthropic Messages request ({'system': ..., 'messages': [...]} with tool_use/tool_result blocks), its bare list of messages, or JSON Lines of requests"
    keys = frozenset({"model", "system", "messages", "max_tokens", "tools",
                      "tool_choice", "metadata", "stream", "temperature", "thinking", "stop_sequences"})  # fmt: skip

    def detect(self, source: Source) -> bool:
        records = _request_values(source)
        if not records:
            return False
        return all(is_request(r.value) for r in records[:3])

    def read(self, source: Source) -> Trajectory:
        records = _request_values(source)
        requests = [r for r in records or () if is_request(r.value)]
        if not requests:
            raise source.error(f"no request with 'messages'; expected {self.expected}")
        chosen = max(reversed(requests), key=lambda r: len(r.value["messages"]))
        request = chosen.value
        system = request.get("system")  # a recorded field, not a wire field to write back (no WIRE_KEY)
        chat = [{"role": "system", "content": system}] if system else []
        root, steps = chat_trajectory(chat + to_chat(request["messages"]))
        meta: dict[str, Any] = {k: request[k] for k in ("model", "metadata") if k in request}
        if len(requests) > 1:
            meta["request_line"] = chosen.line
        return Trajectory(root=root, steps=steps, source=str(source.path), format=self.name, meta=meta)


READER = AnthropicReader()
