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
from contextweaver.serve.converted import Conversions
from contextweaver.serve.wire import BadConversation, Conversation, Payload, Wire, as_chat
from contextweaver.types import Message

MARK = "cache_control"
ROLES = ("user", "assistant")
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
               404: "not_found_error", 409: "invalid_request_error", 413: "request_too_large",
               429: "rate_limit_error", 529: "overloaded_error"}  # fmt: skip


def error(status: int, message: str, *, kind: str | None = None, param: str | None = None, code: str | None = None,
          headers: dict[str, str] | None = None) -> JSONResponse:  # fmt: skip
    """An error in Anthropic's shape, so the caller's SDK raises it with our message."""
    name = ERROR_TYPES.get(status, "api_error")
    text = f"{message} ({param})" if param and param not in message else message
    return JSONResponse({"type": "error", "error": {"type": name, "message": text}}, status_code=status,
                        headers=dict(headers or {}))  # fmt: skip


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
    fine: bool
    role: str
    marked: tuple[int, ...]
    """Positions of the messages with breakpoints, up to this one."""


@dataclass
class Read:
    marks: dict[str, Any]
    """Every breakpoint of the request, by block key (for `write`)."""
    as_sent: bool
    """Rendering the request's own chat messages gives back its messages: the body may go as it came."""


def _checked(message: Any, position: int) -> dict[str, Any]:
    where = f"messages[{position}]"
    if not isinstance(message, dict) or message.get("role") not in ROLES:
        raise BadConversation(f"{where} must be an object with role 'user' or 'assistant'", f"{where}.role")
    content = message.get("content")
    if not isinstance(content, (str, list)) or (
        isinstance(content, list) and not all(isinstance(b, dict) and "type" in b for b in content)
    ):
        raise BadConversation(f"{where}.content must be a string or a list of content blocks with 'type'",
                              f"{where}.content")  # fmt: skip
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
        converted = anthropic.to_chat([{**message, "content": _unmarked(message.get("content"), marks)}])
        content = message["content"]
        keys = frozenset(block_key(b) for b in content) if isinstance(content, list) else frozenset()
        fine = (before is None or (before.fine and before.role != message["role"])) and _render(
            converted, marks
        ) == [message]
        marked = before.marked if before is not None else ()
        before = Note(marks, keys, fine, message["role"], (*marked, position) if marks else marked)
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
    return conversation, Read(marks, as_sent)


def _render(messages: list[Message], marks: dict[str, Any]) -> list[dict[str, Any]]:
    marks = dict(marks)
    out = anthropic.from_chat(messages)
    for message in reversed(out):  # a breakpoint goes on the latest block it fits
        content = message["content"]
        if not isinstance(content, list):
            continue
        for position in range(len(content) - 1, -1, -1):
            key = block_key(content[position])
            if key in marks:
                content[position] = {**content[position], MARK: marks.pop(key)}
    return out


def write(payload: Payload, messages: list[Message], state: Read) -> None:
    payload["messages"] = _render(messages, state.marks)


def as_sent(state: Read) -> bool:
    return state.as_sent


MESSAGES = Wire("anthropic", "/messages", "messages", read, write, error, as_sent=as_sent)
