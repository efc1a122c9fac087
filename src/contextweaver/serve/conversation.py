"""An incoming chat request's messages as root + steps, read by the same readers as recorded runs.

OpenAI tool calling (assistant `tool_calls` + `tool` results) goes through formats/openai.py;
mini-swe-agent's text protocol (one ```bash block per assistant message, the output in the next
user message) through formats/minisweagent.py. A trailing step that is not finished (an assistant
message with no observation yet, or tool calls still missing results) is "pending": it is
forwarded verbatim after the woven context but not stored, because the next request will resend
it complete. Digests of the root and of each step's messages are how a resent history is matched
to the stored one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from contextweaver.errors import ContextWeaverError
from contextweaver.formats import Reader
from contextweaver.formats.base import Trajectory, TrajectoryError
from contextweaver.formats.minisweagent import READER as MINI_SWE_AGENT
from contextweaver.formats.openai import READER as OPENAI
from contextweaver.formats.source import Source
from contextweaver.store.base import digest
from contextweaver.types import Message, Step

READERS: dict[str, Reader] = {OPENAI.name: OPENAI, MINI_SWE_AGENT.name: MINI_SWE_AGENT}
FORMATS = ("auto", *READERS)


class BadConversation(ContextWeaverError, ValueError):
    """The request's messages cannot be read as a conversation; the message says what to fix."""

    def __init__(self, message: str, param: str = "messages") -> None:
        super().__init__(message)
        self.param = param


@dataclass
class Conversation:
    root: list[Message]
    steps: list[Step]
    format: str
    pending: list[Message] = field(default_factory=list)

    @cached_property
    def root_digest(self) -> str:
        return digest(self.root)

    @cached_property
    def step_digests(self) -> list[str]:
        return [digest(step.chat_messages()) for step in self.steps]

    @cached_property
    def key(self) -> str | None:
        """Identity of a conversation without a session header: its root and its first step."""
        if not self.steps:
            return None
        return digest([*self.root, *self.steps[0].chat_messages()])


def validate_messages(messages: Any) -> list[Message]:
    """The `messages` field as a list of chat messages, or BadConversation naming the bad one."""
    if not isinstance(messages, list) or not messages:
        raise BadConversation("'messages' must be a non-empty list of chat messages")
    for position, message in enumerate(messages):
        if not isinstance(message, dict):
            raise BadConversation(f"messages[{position}] must be an object, not {type(message).__name__}")
        role = message.get("role")
        if not isinstance(role, str) or not role:
            raise BadConversation(f"messages[{position}] has no 'role'", f"messages[{position}].role")
        content = message.get("content")
        if content is not None and not isinstance(content, (str, list)):
            raise BadConversation(
                f"messages[{position}].content must be a string, a list of parts or null",
                f"messages[{position}].content",
            )
    if messages[0].get("role") == "assistant":
        raise BadConversation(
            "the conversation starts with an assistant message: send the system prompt or the task first"
        )
    return messages


def _source(messages: list[Message]) -> Source:
    """A reader's Source over messages already parsed (no second JSON parse of the request)."""
    source = Source(Path("<request>"), "")
    source.__dict__["document"] = {"messages": messages}  # fills Source.document's cached_property
    return source


def detect_format(messages: list[Message]) -> str:
    return MINI_SWE_AGENT.name if MINI_SWE_AGENT.detect(_source(messages)) else OPENAI.name


def read_conversation(messages: Any, fmt: str = "auto") -> Conversation:
    """Root, finished steps and the pending tail of a request's messages, in format `fmt`."""
    checked = validate_messages(messages)
    name = detect_format(checked) if fmt == "auto" else fmt
    if name not in READERS:
        raise ValueError(f"unknown conversation format {fmt!r}; valid: {', '.join(FORMATS)}")
    try:
        trajectory: Trajectory = READERS[name].read(_source(checked))
    except TrajectoryError as exc:
        raise BadConversation(str(exc).removeprefix("<request>: ")) from exc
    steps = list(trajectory.steps)
    pending: list[Message] = []
    if steps and _unfinished(steps[-1]):
        pending = list(steps.pop().chat_messages())
    return Conversation(root=list(trajectory.root), steps=steps, format=name, pending=pending)


def _unfinished(step: Step) -> bool:
    """A step still waiting for its observation: the agent's call is out, the results are not in."""
    if step.kind == "user" or not step.messages:
        return False
    return step.messages[-1].get("role") == "assistant" or bool(step.meta.get("unpaired_tool_calls"))
