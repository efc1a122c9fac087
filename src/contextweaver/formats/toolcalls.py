"""Build a Step from one model response's tool calls and their results, keeping the pairing.

Event-stream formats (OpenHands v0 and SDK) record calls and results as separate events; the LLM
saw them as an assistant message with `tool_calls` followed by one `tool` message per call. One
response's calls form one Step, so compression can never split a call from its result. When a
call has no recorded result (the run stopped, or `finish` needs none) the step carries no messages
(weaving then synthesizes a plain text pair) and says so in `meta["unpaired_tool_calls"]`: a
provider rejects an assistant message whose tool calls lack results.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from contextweaver.tokens import content_text
from contextweaver.types import Message, Step

OBSERVATION_SEPARATOR = "\n\n"


@dataclass
class Call:
    """One tool call: its id and name, the source's arguments, the action text, and its result."""

    id: str
    name: str
    arguments: str
    action: str
    observation: str | None = None
    images: int = 0


def arguments_text(arguments: Any) -> str:
    if arguments is None:
        return ""
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def action_text(name: str, arguments: Any) -> str:
    """The action as a reader sees it: a shell command or code verbatim, otherwise `name {json}`."""
    parsed = arguments
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except ValueError:
            parsed = None
    if isinstance(parsed, dict):
        for key in ("command", "code"):
            value = parsed.get(key)
            if (
                isinstance(value, str)
                and value.strip()
                and len(parsed) <= 3
                and name not in ("str_replace_editor", "file_editor")
            ):
                return value
    text = arguments_text(arguments)
    return f"{name} {text}".strip() if text not in ("", "{}") else name


def tool_step(
    thought: str,
    calls: list[Call],
    assistant: Message | None = None,
    meta: dict[str, Any] | None = None,
) -> Step:
    """A Step whose messages are the assistant message + one `tool` result per call, in call order."""
    meta = dict(meta or {})
    observation = OBSERVATION_SEPARATOR.join(c.observation for c in calls if c.observation is not None)
    action = "\n".join(c.action for c in calls if c.action)
    unpaired = [c.id for c in calls if c.observation is None]
    messages: tuple[Message, ...] = ()
    if calls and not unpaired:
        if assistant is None or not _same_calls(assistant, calls):
            assistant = {
                "role": "assistant",
                "content": thought or None,
                "tool_calls": [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                    for c in calls
                ],
            }
        results = [
            {"role": "tool", "tool_call_id": c.id, "name": c.name, "content": c.observation} for c in calls
        ]
        messages = (assistant, *results)
    elif unpaired:
        meta["unpaired_tool_calls"] = unpaired
    return Step(
        thought=thought,
        action=action,
        observation=observation,
        messages=messages,
        images=sum(c.images for c in calls),
        meta=meta,
    )


def _same_calls(assistant: Message, calls: list[Call]) -> bool:
    ids = [c.get("id") for c in assistant.get("tool_calls") or () if isinstance(c, dict)]
    return ids == [c.id for c in calls]


def obj(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else {} (recorded fields are often null or missing)."""
    return value if isinstance(value, dict) else {}


def text_of(value: Any) -> str:
    """Text of a content value: a string, a list of text parts, or a {"text": ...} part."""
    if isinstance(value, dict) and "text" in value:
        return str(value["text"])
    return content_text(value)
