"""OpenAI chat messages with tool calling: a JSON list of messages, or {"messages": [...]}.

Root = the messages before the first assistant message. An assistant message and the `tool`
messages answering its `tool_calls` form one Step whose messages keep that pairing verbatim;
several calls in one assistant message stay in one Step (providers reject a split), built by
`toolcalls.chat_step`. A user message after the root is a person speaking mid-run: a Step of kind "user".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from contextweaver.formats.base import Trajectory
from contextweaver.formats.source import Source
from contextweaver.formats.toolcalls import chat_step, message_list
from contextweaver.records import Message, Step
from contextweaver.tokens import content_text, count_images


def anthropic_block(messages: Sequence[Any]) -> tuple[int, str] | None:
    """The first Anthropic tool block OpenAI chat does not read (position, type): a `tool_result`, or a
    `tool_use` in a message without `tool_calls`. Read as chat, the call would be a step with no action
    and its result a person speaking. (Blocks with their `tool_calls` beside them, as the proxy's
    Anthropic wire passes them on, are read through those calls.)"""
    for position, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "tool_result" or (kind == "tool_use" and not message.get("tool_calls")):
                return position, kind
    return None


def chat_trajectory(messages: Sequence[Message]) -> tuple[list[Message], list[Step]]:
    """Root (the messages before the first assistant message) and Steps of a chat with tool calls."""
    first = next((i for i, m in enumerate(messages) if m["role"] == "assistant"), len(messages))
    steps: list[Step] = []
    turn: list[Message] = []
    for message in messages[first:]:
        if message["role"] == "assistant" or (message["role"] == "user" and turn):
            if turn:
                steps.append(chat_step(turn))
            turn = []
        if message["role"] == "user":
            steps.append(Step(observation=content_text(message.get("content")), messages=(message,), kind="user",
                              images=count_images(message.get("content"))))  # fmt: skip
            continue
        turn.append(message)
    if turn:
        steps.append(chat_step(turn))
    return list(messages[:first]), steps


class OpenAIChatReader:
    name = "openai"
    expected = "OpenAI chat messages (a JSON list, or {\"messages\": [...]}) with assistant 'tool_calls' and 'tool' results"
    keys = frozenset({"messages", "role", "content", "tool_calls", "tool_call_id", "name"})

    def detect(self, source: Source) -> bool:
        messages = message_list(source.document)
        if not messages or not all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages):
            return False
        return any(m["role"] == "assistant" for m in messages) and anthropic_block(messages) is None

    def read(self, source: Source) -> Trajectory:
        messages = message_list(source.document)
        if messages is None:
            raise source.error(f"no message list; expected {self.expected}")
        for position, message in enumerate(messages):
            if not isinstance(message, dict) or "role" not in message:
                raise source.error(
                    f"messages[{position}] is not a chat message with 'role'; expected {self.expected}"
                )
        block = anthropic_block(messages)
        if block is not None:
            raise source.error(
                f"messages[{block[0]}] holds an Anthropic {block[1]!r} block, which OpenAI chat does not have "
                "(its calls are 'tool_calls', its results 'tool' messages): read it as anthropic "
                "(--input-format anthropic, or none to detect it)"
            )
        root, steps = chat_trajectory(messages)
        meta = (
            {k: v for k, v in source.document.items() if k != "messages"}
            if isinstance(source.document, dict)
            else {}
        )
        return Trajectory(root=root, steps=steps, source=str(source.path), format=self.name, meta=meta)


READER = OpenAIChatReader()
