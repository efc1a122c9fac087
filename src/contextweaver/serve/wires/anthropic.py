"""The Anthropic Messages wire (`POST /v1/messages`): what Claude Code and the Claude Agent SDK speak.

The `messages` become the internal conversation through formats/anthropic.py (tool_use and
tool_result blocks as paired tool calls); the top-level `system`, `tools` and every other field
go upstream untouched. Prompt-caching breakpoints (`cache_control`) move from turn to turn, so
they are taken off the blocks before the history is matched with the stored session (a moved
breakpoint is not a new history) and put back, as sent, on the same blocks of the woven request.
A breakpoint on a tool result that weaving compressed stays on that result's placeholder; one on
a block that weaving left out is dropped (the API allows at most four). Headers (`x-api-key`,
`anthropic-version`, `anthropic-beta`) go upstream as for any request and are never stored.
Messages resent unchanged are converted once (converted.py). A history that weaving passes through
goes upstream as sent when rendering it would give back the same messages (no assistant text as a
bare string, no two turns of one role in a row, every breakpoint on the last block of its key).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from starlette.responses import JSONResponse

from contextweaver.formats import anthropic
from contextweaver.records import Message
from contextweaver.serve.gate.http import ERROR_HEADER
from contextweaver.serve.wires.converted import Conversions
from contextweaver.serve.wires.wire import BadConversation, Conversation, Payload, Wire, as_chat

MARK = "cache_control"
ROLES = ("user", "assistant", "system")
"""Claude Code puts a `system` message (its environment block, later reminders) inside `messages`."""
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
               404: "not_found_error", 409: "invalid_request_error", 413: "request_too_large",
               415: "invalid_request_error", 429: "rate_limit_error", 502: "api_error",
               504: "timeout_error", 529: "overloaded_error"}  # fmt: skip


def error(status: int, message: str, *, kind: str | None = None, param: str | None = None, code: str | None = None,
          headers: dict[str, str] | None = None) -> JSONResponse:  # fmt: skip
    """An error in Anthropic's shape, so the caller's SDK raises it with our message."""
    name = ERROR_TYPES.get(status, "api_error")
    text = f"{message} ({param})" if param and param not in message else message
    return JSONResponse({"type": "error", "error": {"type": name, "message": text}}, status_code=status,
                        headers={ERROR_HEADER: code or kind or name, **(headers or {})})  # fmt: skip


def block_key(block: dict[str, Any]) -> str:
    """Which block a breakpoint belongs to: a call or result by its id, any other block by value."""
    if block.get("type") == "tool_result":
        return "result:" + str(block.get("tool_use_id"))
    if block.get("type") == "tool_use":
        return "call:" + str(block.get("id"))
    return json.dumps({k: v for k, v in block.items() if k != MARK}, sort_keys=True, default=str)


def _unmarked(content: Any, marks: dict[str, Any]) -> Any:
    if not isinstance(content, list):
        return content
    out = []
    for block in content:
        if isinstance(block, dict) and MARK in block:
            marks[block_key(block)] = block[MARK]
            block = {k: v for k, v in block.items() if k != MARK}
        out.append(block)
    return out


@dataclass
class Note:
    """One wire message as converted: its breakpoints, its block keys, and whether the history up to
    it renders back to exactly what was sent (`fine`)."""

    marks: dict[str, Any]
    keys: frozenset[str]
    results: dict[str, Any]
    """This message's tool_result blocks as sent (breakpoints off), by block key: what rendering
    cannot rebuild (`is_error: false`, unknown fields, their order) comes back from them."""
    fine: bool
    role: str
    marked: tuple[int, ...]
    """Positions of the messages with breakpoints, up to this one."""


def _results(content: Any) -> dict[str, Any]:
    if not isinstance(content, list):
        return {}
    return {block_key(b): b for b in content if b.get("type") == "tool_result"}


@dataclass(frozen=True)
class Aside:
    """A system message between steps (Claude Code's reminders): part of no step, so a step's
    digest never changes when one is added after it, and put back before the message it preceded."""

    message: dict[str, Any]
    before: str | None
    """The key of the message it preceded (None: it was the last)."""


def message_key(message: Any) -> str:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list) and content and isinstance(content[0], dict):
        return block_key(content[0])
    return json.dumps([message.get("role") if isinstance(message, dict) else None, content], default=str)


def split_asides(messages: list[Any]) -> tuple[list[Any], list[Aside]]:
    """The messages without the system messages that come after the first model turn, and those."""
    first = next((i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "assistant"),
                 len(messages))  # fmt: skip
    if not any(isinstance(m, dict) and m.get("role") == "system" for m in messages[first:]):
        return messages, []
    kept: list[Any] = []
    asides: list[Aside] = []
    before: str | None = None  # the key of the next message that is not an aside, walking back
    for message in reversed(messages[first:]):
        if isinstance(message, dict) and message.get("role") == "system":
            asides.append(Aside(message, before))
        else:
            kept.append(message)
            before = message_key(message)
    return [*messages[:first], *reversed(kept)], asides[::-1]


def put_asides(out: list[dict[str, Any]], asides: list[Aside]) -> list[dict[str, Any]]:
    """Each aside before the message it preceded; one whose message was cut goes after the root."""
    if not asides:
        return out
    by_key: dict[str | None, list[dict[str, Any]]] = {}
    for aside in asides:
        by_key.setdefault(aside.before, []).append(aside.message)
    keys = [message_key(m) for m in out]
    placed = set(keys) & by_key.keys()
    lost = [m for key, group in by_key.items() if key is not None and key not in placed for m in group]
    first = next((i for i, m in enumerate(out) if m.get("role") == "assistant"), len(out))
    result: list[dict[str, Any]] = []
    for position, (message, key) in enumerate(zip(out, keys, strict=True)):
        if position == first:
            result += lost
        result += by_key.pop(key, []) if key in placed else []
        result.append(message)
    if first == len(out):
        result += lost
    return result + by_key.get(None, [])


@dataclass
class Read:
    marks: dict[str, Any]
    """Every breakpoint of the request, by block key (for `write`)."""
    notes: list[Note]
    """Every message's note: `write` takes the tool_result blocks as sent from them."""
    asides: list[Aside]
    as_sent: bool
    """Rendering the request's own chat messages gives back its messages: the body may go as it came."""


def _checked(message: Any, position: int) -> dict[str, Any]:
    where = f"messages[{position}]"
    if not isinstance(message, dict) or message.get("role") not in ROLES:
        raise BadConversation(f"{where} must be an object with role 'user', 'assistant' or 'system'",
                              f"{where}.role")  # fmt: skip
    content = message.get("content")
    if not isinstance(content, (str, list)) or (
        isinstance(content, list)
        and not all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in content)
    ):
        raise BadConversation(f"{where}.content must be a string or a list of content blocks with 'type' "
                              "(a string)", f"{where}.content")  # fmt: skip
    return message


def _convert(
    messages: list[Any], start: int, before: Note | None
) -> tuple[list[Message], list[int], list[Note]]:
    chat: list[Message] = []
    firsts: list[int] = []
    notes: list[Note] = []
    for position in range(start, len(messages)):
        message = _checked(messages[position], position)
        marks: dict[str, Any] = {}
        unmarked = _unmarked(message.get("content"), marks)
        converted = anthropic.to_chat([{**message, "content": unmarked}])
        content = message["content"]
        keys = frozenset(block_key(b) for b in content) if isinstance(content, list) else frozenset()
        results = _results(unmarked)
        fine = (before is None or (before.fine and before.role != message["role"])) and _render(
            converted, marks, results
        ) == [message]
        marked = before.marked if before is not None else ()
        before = Note(marks, keys, results, fine, message["role"], (*marked, position) if marks else marked)
        chat += converted
        firsts += [position] * len(converted)
        notes.append(before)
    return chat, firsts, notes


CONVERSIONS = Conversions(_convert)


def read(payload: Payload, fmt: str) -> tuple[Conversation, Read]:
    """The request's conversation, and the breakpoints taken off its blocks (for `write`)."""
    messages = payload["messages"]
    if not isinstance(messages, list) or not messages:
        raise BadConversation("'messages' must be a non-empty list of messages")
    messages, asides = split_asides(messages)
    converted = CONVERSIONS(messages)
    system = anthropic.to_chat([], _unmarked(payload.get("system"), {}))
    marks: dict[str, Any] = {}
    marked = converted.notes[-1].marked
    for i in marked:
        marks.update(converted.notes[i].marks)
    # a breakpoint goes back on the latest block of its key: one whose key recurs later moves
    as_sent = converted.notes[-1].fine and not any(
        converted.notes[i].marks.keys() & note.keys for i in marked for note in converted.notes[i + 1 :]
    )
    conversation = as_chat([*system, *converted.chat], range(len(system), len(system) + converted.reused))
    return conversation, Read(marks, converted.notes, asides, as_sent)


def _render(messages: list[Message], marks: dict[str, Any], results: dict[str, Any]) -> list[dict[str, Any]]:
    marks = dict(marks)
    out = anthropic.from_chat(messages)
    for message in reversed(out):  # a breakpoint goes on the latest block it fits
        content = message["content"]
        if not isinstance(content, list):
            continue
        for position in range(len(content) - 1, -1, -1):
            key = block_key(content[position])
            if key in results:
                content[position] = _as_sent(content[position], results[key])
            if key in marks:
                content[position] = {**content[position], MARK: marks.pop(key)}
    return out


def _as_sent(block: dict[str, Any], sent: dict[str, Any]) -> dict[str, Any]:
    """A rendered tool_result as the client sent it: every field of its own kept, the content woven."""
    if block.get("content") == sent.get("content"):
        return dict(sent)
    kept = {**sent, "content": block["content"]} if "content" in block else dict(sent)
    if "content" not in block:
        kept.pop("content", None)
    return kept


def write(payload: Payload, messages: list[Message], state: Read) -> None:
    results = {key: block for note in state.notes for key, block in note.results.items()}
    payload["messages"] = put_asides(_render(messages, state.marks, results), state.asides)


def as_sent(state: Read) -> bool:
    return state.as_sent


def passthrough(payload: Payload) -> str | None:
    """A request holding a `compaction` block (the API's own summary of what came before) goes upstream
    byte for byte: what the block stands for is the provider's, so nothing in it is re-woven or stored."""
    messages = payload.get("messages")
    for message in messages if isinstance(messages, list) else ():
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "compaction" for b in content
        ):
            return "compaction"
    return None


MESSAGES = Wire(
    "anthropic", "/messages", "messages", read, write, error, passthrough=passthrough, as_sent=as_sent
)
