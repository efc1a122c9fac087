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

from dataclasses import replace
from functools import cached_property
from itertools import chain
from pathlib import Path
from typing import Any

from contextweaver.errors import ContextWeaverError
from contextweaver.formats import Reader
from contextweaver.formats.base import Trajectory, TrajectoryError
from contextweaver.formats.minisweagent import READER as MINI_SWE_AGENT
from contextweaver.formats.openai import READER as OPENAI
from contextweaver.formats.source import Source
from contextweaver.records import Message, Step
from contextweaver.store.base import digest

READERS: dict[str, Reader] = {OPENAI.name: OPENAI, MINI_SWE_AGENT.name: MINI_SWE_AGENT}
FORMATS = ("auto", *READERS)


class BadConversation(ContextWeaverError, ValueError):
    """The request's messages cannot be read as a conversation; the message says what to fix."""

    def __init__(self, message: str, param: str = "messages") -> None:
        super().__init__(message)
        self.param = param


class Conversation:
    """A request's history: its root now, its steps parsed only as far as they are asked for.

    A proxy request resends the whole history; a session already holds most of it, so `steps_from`
    reads only the messages after a given position, and `key` and `pending` read only the first and
    the last step. `steps` (all of them) is parsed on first use. Built from `steps` directly (no
    `messages`), everything is eager.
    """

    def __init__(
        self,
        root: list[Message],
        steps: list[Step] | None = None,
        format: str = OPENAI.name,
        pending: list[Message] | None = None,
        *,
        messages: list[Message] | None = None,
    ) -> None:
        if steps is None and messages is None:
            raise ValueError("a Conversation needs its steps or its request messages")
        self.root = root
        self.format = format
        self.reserved = 0
        """Tokens the request sends besides its messages (tool definitions): the budget holds them too."""
        self.messages = messages
        """The request's chat messages (None when built from steps): the root, then the steps' messages."""
        if steps is not None:
            self.__dict__["steps"] = steps
            self.__dict__["pending"] = pending or []

    @cached_property
    def steps(self) -> list[Step]:
        """Every finished step (the pending tail excluded)."""
        return self.steps_from(len(self.root))

    @cached_property
    def pending(self) -> list[Message]:
        """The unfinished last step's messages: forwarded after the context, stored by a later request."""
        assert self.messages is not None
        start = next((i for i in range(len(self.messages) - 1, len(self.root) - 1, -1)
                      if self.messages[i].get("role") == "assistant"), None)  # fmt: skip
        if start is None:
            return []
        steps = self._read(start, len(self.messages))
        return list(steps[-1].chat_messages()) if steps and _unfinished(steps[-1]) else []

    def steps_from(self, start: int) -> list[Step]:
        """The finished steps whose messages begin at `start` (a step boundary: the root's end or an
        assistant message), read from those messages alone."""
        if self.messages is None:
            raise ValueError("this conversation was built from steps: use .steps")
        steps = self._read(start, len(self.messages))
        if steps and _unfinished(steps[-1]):
            self.__dict__.setdefault("pending", list(steps.pop().chat_messages()))
        return steps

    def _read(self, start: int, end: int) -> list[Step]:
        assert self.messages is not None
        if start >= end:
            return []
        window = [*self.messages[: len(self.root)], *self.messages[start:end]]
        try:
            trajectory: Trajectory = READERS[self.format].read(_source(window))
        except TrajectoryError as exc:
            raise BadConversation(str(exc).removeprefix("<request>: ")) from exc
        shift = start - len(self.root)
        if not shift:
            return list(trajectory.steps)
        return [_shifted(step, shift) for step in trajectory.steps]

    @cached_property
    def root_digest(self) -> str:
        return digest(self.root)

    @cached_property
    def step_digests(self) -> list[str]:
        return [digest(step.chat_messages()) for step in self.steps]

    @cached_property
    def key(self) -> str | None:
        """Identity of a conversation without a session header: its root and its first step."""
        first = self._first_step()
        return None if first is None else digest([*self.root, *first.chat_messages()])

    def _first_step(self) -> Step | None:
        if self.messages is None or "steps" in self.__dict__:
            return self.steps[0] if self.steps else None
        start = len(self.root)
        end = next((i for i in range(start + 1, len(self.messages)) if self.messages[i].get("role") == "assistant"),
                   len(self.messages))  # fmt: skip
        steps = self._read(start, end)
        if end == len(self.messages) and steps and _unfinished(steps[-1]):
            steps.pop()
        return steps[0] if steps else None


def _shifted(step: Step, shift: int) -> Step:
    """A step read from a window of the messages, with its recorded message position made absolute."""
    position = step.meta.get("message_index")
    if not isinstance(position, int):
        return step
    return replace(step, meta={**step.meta, "message_index": position + shift})


def validate_messages(messages: Any, checked: range = range(0)) -> list[Message]:
    """The `messages` field as a list of chat messages, or BadConversation naming the bad one
    (the positions in `checked` were checked before)."""
    if not isinstance(messages, list) or not messages:
        raise BadConversation("'messages' must be a non-empty list of chat messages")
    count = len(messages)
    for position in chain(range(min(checked.start, count)), range(max(checked.stop, checked.start), count)):
        message = messages[position]
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
        if isinstance(content, list) and not all(isinstance(part, (dict, str)) for part in content):
            raise BadConversation(
                f"messages[{position}].content parts must be objects", f"messages[{position}].content"
            )
        _check_tool_fields(message, f"messages[{position}]")
    if messages[0].get("role") == "assistant":
        raise BadConversation(
            "the conversation starts with an assistant message: send the system prompt or the task first"
        )
    return messages


def _check_tool_fields(message: Message, where: str) -> None:
    """Tool calls shaped as OpenAI sends them: readers and the upstream rely on these types."""
    calls = message.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        raise BadConversation(f"{where}.tool_calls must be a list", f"{where}.tool_calls")
    for number, call in enumerate(calls or ()):
        at = f"{where}.tool_calls[{number}]"
        if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
            raise BadConversation(f"{at} must be an object with a 'function' object", at)
        if "id" in call and not isinstance(call["id"], str):
            raise BadConversation(f"{at}.id must be a string", f"{at}.id")
        function = call["function"]
        if not isinstance(function.get("name"), str):
            raise BadConversation(f"{at}.function.name must be a string", f"{at}.function.name")
        if not isinstance(function.get("arguments", ""), (str, dict)):
            raise BadConversation(
                f"{at}.function.arguments must be a JSON string", f"{at}.function.arguments"
            )
    if "tool_call_id" in message and not isinstance(message["tool_call_id"], str):
        raise BadConversation(f"{where}.tool_call_id must be a string", f"{where}.tool_call_id")


def _source(messages: list[Message]) -> Source:
    """A reader's Source over messages already parsed (no second JSON parse of the request)."""
    source = Source(Path("<request>"), "")
    source.__dict__["document"] = {"messages": messages}  # fills Source.document's cached_property
    return source


def detect_format(messages: list[Message]) -> str:
    return MINI_SWE_AGENT.name if MINI_SWE_AGENT.detect(_source(messages)) else OPENAI.name


def read_conversation(messages: Any, fmt: str = "auto", known: range = range(0)) -> Conversation:
    """A request's messages as a conversation in format `fmt`: the root now, the steps when asked for
    (`known`: positions of messages checked before)."""
    checked = validate_messages(messages, known)
    name = detect_format(checked) if fmt == "auto" else fmt
    if name not in READERS:
        raise ValueError(f"unknown conversation format {fmt!r}; valid: {', '.join(FORMATS)}")
    first = next((i for i, m in enumerate(checked) if m.get("role") == "assistant"), len(checked))
    try:
        root = READERS[name].read(_source(checked[:first])).root
    except TrajectoryError as exc:
        raise BadConversation(str(exc).removeprefix("<request>: ")) from exc
    if len(root) != first:
        raise ValueError(f"the {name} reader changed the number of root messages")
    return Conversation(root=list(root), format=name, messages=checked)


def _unfinished(step: Step) -> bool:
    """A step still waiting for its observation: the agent's call is out, the results are not in."""
    if step.kind == "user" or not step.messages:
        return False
    return step.messages[-1].get("role") == "assistant" or bool(step.meta.get("unpaired_tool_calls"))
