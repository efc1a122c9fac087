"""The OpenAI Responses wire (`POST /v1/responses`): what Codex CLI and the OpenAI Agents SDK speak.

The `input` items become the internal conversation through formats/responses.py (function_call
and function_call_output paired by call_id); `instructions` is the system prompt of the root and
goes upstream as sent, like `tools`, `prompt_cache_key`, `store`, `reasoning` and every other field.
Items that weaving leaves alone go upstream verbatim (reasoning with its encrypted content too);
items resent unchanged are converted once (converted.py), and a history that weaving passes through
goes upstream as sent (unless `input` was a bare string).

`previous_response_id`: the earlier turns then live on OpenAI's servers, out of the proxy's
sight, and `input` holds only the new items. Weaving those alone would store a fragment and change
nothing the model sees, so such a request is forwarded unchanged (nothing is woven or stored) and
marked `x-contextweaver-passthrough: previous_response_id`. A request holding a provider's own
compaction item (encrypted: what it stands for is the provider's), or Codex's `compaction_trigger` (the
request asking the upstream to compact), goes the same way, marked `compaction`: it reaches the upstream
byte for byte, nothing in it is re-woven, so a compacted conversation is never cut below its compaction. Clients that send their whole history
(Codex CLI does, with `store: false`) are woven like any chat.
"""

from __future__ import annotations

from typing import Any

from contextweaver.formats import responses
from contextweaver.records import Message
from contextweaver.serve.wires.converted import Conversions
from contextweaver.serve.wires.wire import BadConversation, Conversation, Payload, Wire, as_chat


def _item(item: Any, position: int) -> dict[str, Any]:
    if not isinstance(item, dict) or not responses.kind_of(item):
        raise BadConversation(f"input[{position}] must be an item object with a 'type'", f"input[{position}]")
    for name in ("type", "role"):
        if name in item and not isinstance(item[name], str):
            raise BadConversation(f"input[{position}].{name} must be a string", f"input[{position}].{name}")
    if item.get("type") in responses.OUTPUTS and not isinstance(item.get("call_id"), str):
        raise BadConversation(f"input[{position}].call_id must be a string", f"input[{position}].call_id")
    return item


def _model_item(item: dict[str, Any]) -> bool:
    """An item `to_chat` groups with its neighbours into one assistant turn."""
    return responses.kind_of(item) not in responses.OUTPUTS and not responses.is_input(item)


def _convert(
    items: list[Any], start: int, before: bool | None
) -> tuple[list[Message], list[int], list[bool]]:
    """Items from `start` (the first of a chat message) as chat messages, and where each begins."""
    firsts: list[int] = []
    notes: list[bool] = []
    for position in range(start, len(items)):
        model = _model_item(_item(items[position], position))
        if not (model and notes and notes[-1]):
            firsts.append(position)
        notes.append(model)
    chat = responses.to_chat(items[start:])
    assert len(chat) == len(firsts), "a chat message begins at each turn's first item"
    return chat, firsts, notes


CONVERSIONS = Conversions(_convert)


def read(payload: Payload, fmt: str) -> tuple[Conversation, bool]:
    """The request's conversation, and whether its items render back as sent (a list, not a string)."""
    value = payload["input"]
    if isinstance(value, str):
        return as_chat(responses.to_chat([{"type": "message", "role": "user", "content": value}],
                                         payload.get("instructions"))), False  # fmt: skip
    if not isinstance(value, list) or not value:
        raise BadConversation("'input' must be a string or a non-empty list of items", "input")
    converted = CONVERSIONS(value)
    system = responses.to_chat([], payload.get("instructions"))
    known = range(len(system), len(system) + converted.reused)
    return as_chat([*system, *converted.chat], known), True


def write(payload: Payload, messages: list[Message], state: bool) -> None:
    payload["input"] = responses.from_chat(messages)


COMPACTION = frozenset({"compaction", "compaction_summary", "compaction_trigger", "context_compaction"})
"""Item types of a provider's own compaction: Codex's `compaction_trigger` (it asks the upstream to compact
on the ordinary stream and expects exactly one `compaction` item back) and the encrypted items that stand
for the history before them, which is the provider's."""


def passthrough(payload: Payload) -> str | None:
    if payload.get("previous_response_id"):
        return "previous_response_id"
    items = payload.get("input")
    if isinstance(items, list) and any(isinstance(i, dict) and _kind(i) in COMPACTION for i in items):
        return "compaction"
    return None


def _kind(item: dict[str, Any]) -> str | None:
    """An item's type when it is a string (any other type is the 400 `read` gives, never a crash here)."""
    kind = item.get("type")
    return kind if isinstance(kind, str) else None


RESPONSES = Wire("responses", "/responses", "input", read, write, passthrough=passthrough, as_sent=bool)
