"""OpenAI Responses API items as chat messages with tool calls, and back.

Codex CLI rollouts and the proxy's `/v1/responses` both hold Responses items: `message` (roles
user, assistant, developer, system), `reasoning`, `function_call` / `function_call_output` (paired
by `call_id`), `custom_tool_call` / `custom_tool_call_output`, `local_shell_call`, and others.
`to_chat` groups the model's consecutive output items (reasoning, text, calls) into one assistant
chat message whose `tool_calls` are its calls, each output into a `tool` message, every other
message into a chat message with text parts, and keeps the original items under ITEMS_KEY.
`from_chat` gives the items back verbatim unless weaving changed the message's text (a
compressed output becomes a `*_output` item with the placeholder text).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from typing import Any

from contextweaver.formats.anthropic import WIRE_KEY
from contextweaver.formats.toolcalls import obj
from contextweaver.records import Message
from contextweaver.tokens import content_text

ITEMS_KEY = "items"
"""The original Responses items a chat message stands for."""
OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output", "local_shell_call_output"})
INPUT_ROLES = frozenset({"user", "system", "developer"})


def kind_of(item: dict[str, Any]) -> str:
    """An item's type; an input message may leave `type` out (the API's "easy input message")."""
    return str(item.get("type") or ("message" if "role" in item else ""))


def input_content(item: dict[str, Any]) -> Any:
    """What an input-side item says: a message's parts; another item of a person or the client (Codex's
    `additional_tools`, role developer) as its JSON, so the root counts what the model is sent."""
    if kind_of(item) == "message":
        return _parts(item.get("content"))
    return json.dumps({k: v for k, v in item.items() if k not in ("type", "id", "role")}, ensure_ascii=False)


def is_input(item: dict[str, Any]) -> bool:
    """An item the client or a person wrote (a user, developer or system message, Codex's tool list)."""
    return kind_of(item) not in OUTPUTS and item.get("role") in INPUT_ROLES


def _parts(content: Any) -> Any:
    """Message or output content with input_text/output_text parts as plain text parts."""
    if not isinstance(content, list):
        return content if content is not None else ""
    return [
        {"type": "text", "text": str(p.get("text", ""))}
        if isinstance(p, dict) and p.get("type") in ("input_text", "output_text", "text", "refusal")
        else p
        for p in content
    ]


def output_content(item: dict[str, Any]) -> Any:
    """What a tool output item says: its text or parts (Codex's JSON record and {"content": ...} unwrapped)."""
    output = item.get("output")
    if isinstance(output, str) and output.startswith('{"output":'):  # Codex's {"output", "metadata"} record
        with contextlib.suppress(ValueError, RecursionError):
            output = obj(json.loads(output)).get("output", output)
    if isinstance(output, dict):
        output = output.get("content", json.dumps(output, ensure_ascii=False))
    return _parts(output)


def _call(item: dict[str, Any]) -> dict[str, Any] | None:
    kind = kind_of(item)
    if kind == "function_call":
        arguments = item.get("arguments", "")
    elif kind == "custom_tool_call":
        arguments = item.get("input", "")
    elif kind == "local_shell_call":
        arguments = json.dumps({"command": (item.get("action") or {}).get("command")}, ensure_ascii=False)
    else:
        return None
    name = "shell" if kind == "local_shell_call" else str(item.get("name", ""))
    call_id = str(item.get("call_id") or item.get("id") or "")
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": str(arguments)}}


def assistant_text(items: Sequence[dict[str, Any]]) -> str:
    """The thought of a model turn: its reasoning summaries and its message text, in order."""
    texts: list[str] = []
    for item in items:
        if kind_of(item) == "reasoning":
            texts.extend(str(p.get("text", "")) for p in item.get("summary") or () if isinstance(p, dict))
        elif kind_of(item) == "message":
            texts.append(content_text(_parts(item.get("content"))))
    return "\n\n".join(t for t in texts if t)


def to_chat(items: Sequence[dict[str, Any]], instructions: Any = None) -> list[Message]:
    """Responses input items (+ the top-level `instructions`) as chat messages, items kept."""
    out: list[Message] = []
    if instructions:
        out.append({"role": "system", "content": instructions, WIRE_KEY: "instructions"})
    turn: list[dict[str, Any]] | None = None
    for item in items:
        kind = kind_of(item)
        if kind in OUTPUTS:
            out.append({"role": "tool", "tool_call_id": str(item.get("call_id", "")),
                        "content": output_content(item), ITEMS_KEY: [item]})  # fmt: skip
            turn = None
        elif is_input(item):
            out.append({"role": str(item["role"]), "content": input_content(item), ITEMS_KEY: [item]})
            turn = None
        else:  # the model's own items: text, reasoning, calls (and types this reader does not know)
            if turn is None:
                turn = []
                out.append({"role": "assistant", "content": "", ITEMS_KEY: turn})
            turn.append(item)
    for message in out:
        if message["role"] == "assistant":
            _fill_assistant(message)
    return out


def _fill_assistant(message: Message) -> None:
    items = message[ITEMS_KEY]
    message["content"] = assistant_text(items)
    calls = [call for call in map(_call, items) if call is not None]
    if calls:
        message["tool_calls"] = calls


def from_chat(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Chat messages back as Responses input items (the `instructions` message is left out)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.get(WIRE_KEY):
            continue
        items = message.get(ITEMS_KEY)
        role, content = message.get("role"), message.get("content")
        if items and _unchanged(message, items):
            out.extend(items)
        elif role == "tool" and items:  # a compressed output: every field of the item kept but its output
            out.append({**items[0], "output": content_text(content)})
        elif role == "tool":
            out.append({"type": "function_call_output", "call_id": message.get("tool_call_id", ""),
                        "output": content_text(content)})  # fmt: skip
        elif role == "assistant" and items:  # text rewritten (trimmed): calls and reasoning kept as they were
            out.append({"type": "message", "role": "assistant",
                        "content": [{"type": "output_text", "text": content_text(content)}]})  # fmt: skip
            out.extend(i for i in items if kind_of(i) != "message")
        else:
            out.append({"type": "message", "role": role if role in INPUT_ROLES else "user",
                        "content": content_text(content)})  # fmt: skip
    return out


def _unchanged(message: Message, items: list[dict[str, Any]]) -> bool:
    role, content = message.get("role"), message.get("content")
    if role == "assistant":
        return content == assistant_text(items)
    if role == "tool":
        return content == output_content(items[0])
    return content == input_content(items[0])
