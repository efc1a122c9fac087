"""One proxy path, several wire formats: how a request's history is read and the woven one written.

A Wire turns a request body into the internal Conversation (chat messages with tool calls, read
by the trajectory readers), and puts the woven messages back into the body in its own format.
Everything between (sessions, the store, weaving, locks, forwarding) is the same for every wire.
`passthrough` names a reason to forward a request unchanged (nothing read, woven or stored).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.responses import JSONResponse

from contextweaver.records import Message
from contextweaver.serve.gate.http import error as openai_error
from contextweaver.serve.wires.conversation import BadConversation, Conversation, read_conversation
from contextweaver.tokens import count_text

Payload = dict[str, Any]


@dataclass(frozen=True)
class Wire:
    name: str
    upstream_path: str
    """The path under the upstream base URL (which ends in /v1)."""
    field: str
    """The request field holding the history: a 400 names it when it is missing."""
    read: Callable[[Payload, str], tuple[Conversation, Any]]
    """The request's conversation (format: the proxy's --format for chat messages) and what `write`
    needs to remember of the request; raises BadConversation."""
    write: Callable[[Payload, list[Message], Any], None]
    """Put the woven messages (context then pending) into the payload, in this wire's format."""
    error: Callable[..., JSONResponse] = openai_error
    """An error response in the shape this wire's clients parse (OpenAI's by default)."""
    passthrough: Callable[[Payload], str | None] = lambda payload: None
    verbatim: bool = False
    """The conversation's messages are the field's own, unconverted: a history woven to exactly them
    lets the body go out as it came."""
    as_sent: Callable[[Any], bool] = lambda state: False
    """Given `read`'s state: writing the request's own messages back gives the field as sent, so a
    history woven to exactly them may go out as it came too."""

    def passes_as_sent(self, state: Any) -> bool:
        return self.verbatim or self.as_sent(state)


def _read_chat(payload: Payload, fmt: str) -> tuple[Conversation, None]:
    return read_conversation(payload["messages"], fmt), None


def _write_chat(payload: Payload, messages: list[Message], state: None) -> None:
    payload["messages"] = messages


CHAT = Wire("chat", "/chat/completions", "messages", _read_chat, _write_chat, verbatim=True)


def tool_tokens(payload: Payload) -> int:
    """Tokens of the request's tool definitions (`tools` on every wire): sent with every call, so the
    budget holds them too (Claude Code's are about 8k)."""
    tools = payload.get("tools")
    return _tokens(json.dumps(tools, ensure_ascii=False, sort_keys=True)) if tools else 0


@functools.lru_cache(maxsize=256)
def _tokens(text: str) -> int:
    """An agent sends the same tools with every request: counted once."""
    return count_text(text)


def as_chat(messages: list[Message], checked: range = range(0)) -> Conversation:
    """A conversation already converted to chat messages with tool calls, read as OpenAI chat
    (`checked`: positions of messages checked by an earlier request)."""
    return read_conversation(messages, "openai", checked)


__all__ = ["CHAT", "BadConversation", "Payload", "Wire", "as_chat", "tool_tokens"]
