"""The OpenAI Responses wire (`POST /v1/responses`): what Codex CLI and the OpenAI Agents SDK speak.

The `input` items become the internal conversation through formats/responses.py (function_call
and function_call_output paired by call_id); `instructions` is the system prompt of the root and
goes upstream as sent, like `tools`, `prompt_cache_key`, `store`, `reasoning` and every other field.
Items that weaving leaves alone go upstream verbatim (reasoning with its encrypted content too).

`previous_response_id`: the earlier turns then live on OpenAI's servers, out of the proxy's
sight, and `input` holds only the new items. Weaving those alone would store a fragment and change
nothing the model sees, so such a request is forwarded unchanged (nothing is woven or stored) and
marked `x-contextweaver-passthrough: previous_response_id`. Clients that send their whole history
(Codex CLI does, with `store: false`) are woven like any chat.
"""

from __future__ import annotations

from typing import Any

from contextweaver.formats import responses
from contextweaver.serve.wire import BadConversation, Conversation, Payload, Wire, as_chat
from contextweaver.types import Message


def _items(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    if not isinstance(value, list) or not value:
        raise BadConversation("'input' must be a string or a non-empty list of items", "input")
    for position, item in enumerate(value):
        if not isinstance(item, dict) or not responses.kind_of(item):
            raise BadConversation(
                f"input[{position}] must be an item object with a 'type'", f"input[{position}]"
            )
        if item.get("type") in responses.OUTPUTS and not isinstance(item.get("call_id"), str):
            raise BadConversation(f"input[{position}].call_id must be a string", f"input[{position}].call_id")
    return value


def read(payload: Payload, fmt: str) -> tuple[Conversation, None]:
    return as_chat(responses.to_chat(_items(payload["input"]), payload.get("instructions"))), None


def write(payload: Payload, messages: list[Message], state: None) -> None:
    payload["input"] = responses.from_chat(messages)


def passthrough(payload: Payload) -> str | None:
    return "previous_response_id" if payload.get("previous_response_id") else None


RESPONSES = Wire("responses", "/responses", "input", read, write, passthrough=passthrough)
