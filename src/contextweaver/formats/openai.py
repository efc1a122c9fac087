"""OpenAI chat messages with tool calling: a JSON list of messages, or {"messages": [...]}.

Root = the messages before the first assistant message. An assistant message and the `tool`
messages answering its `tool_calls` form one Step whose messages keep that pairing verbatim;
several calls in one assistant message stay in one Step (providers reject a split). Action = each
call as `name {arguments}` (a shell `command` argument verbatim), observation = the results in call
order. A user message after the root is a person speaking mid-run: a Step of kind "user". Tool
results whose id matches no call of the step are kept in it and listed in meta["orphan_results"].
"""

from __future__ import annotations

from typing import Any

from contextweaver.formats.base import Trajectory
from contextweaver.formats.source import Source
from contextweaver.formats.toolcalls import OBSERVATION_SEPARATOR, action_text, arguments_text
from contextweaver.tokens import content_text, count_images
from contextweaver.types import Message, Step


def _messages(document: Any) -> list[Any] | None:
    if isinstance(document, dict) and isinstance(document.get("messages"), list):
        return document["messages"]
    return document if isinstance(document, list) else None


def _function(call: Any) -> dict[str, Any]:
    function = call.get("function") if isinstance(call, dict) else None
    return function if isinstance(function, dict) else {}


class OpenAIChatReader:
    name = "openai"
    expected = "OpenAI chat messages (a JSON list, or {\"messages\": [...]}) with assistant 'tool_calls' and 'tool' results"

    def detect(self, source: Source) -> bool:
        messages = _messages(source.document)
        if not messages or not all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages):
            return False
        return any(m["role"] == "assistant" for m in messages)

    def read(self, source: Source) -> Trajectory:
        messages = _messages(source.document)
        if messages is None:
            raise source.error(f"no message list; expected {self.expected}")
        for position, message in enumerate(messages):
            if not isinstance(message, dict) or "role" not in message:
                raise source.error(
                    f"messages[{position}] is not a chat message with 'role'; expected {self.expected}"
                )
        first = next((i for i, m in enumerate(messages) if m["role"] == "assistant"), len(messages))
        steps: list[Step] = []
        turn: list[Message] = []
        for message in messages[first:]:
            if message["role"] == "assistant" or (message["role"] == "user" and turn):
                if turn:
                    steps.append(self._step(turn))
                turn = []
            if message["role"] == "user":
                steps.append(Step(observation=content_text(message.get("content")), messages=(message,), kind="user",
                                  images=count_images(message.get("content"))))  # fmt: skip
                continue
            turn.append(message)
        if turn:
            steps.append(self._step(turn))
        meta = (
            {k: v for k, v in source.document.items() if k != "messages"}
            if isinstance(source.document, dict)
            else {}
        )
        return Trajectory(
            root=list(messages[:first]), steps=steps, source=str(source.path), format=self.name, meta=meta
        )

    @staticmethod
    def _step(turn: list[Message]) -> Step:
        head, rest = (turn[0], turn[1:]) if turn[0]["role"] == "assistant" else ({}, turn)
        calls = [c for c in head.get("tool_calls") or () if isinstance(c, dict)]
        order = {c.get("id"): i for i, c in enumerate(calls)}
        results = sorted(rest, key=lambda m: order.get(m.get("tool_call_id"), len(order)))
        meta: dict[str, Any] = {}
        orphans = [m.get("tool_call_id") for m in rest if m.get("tool_call_id") not in order]
        if orphans:
            meta["orphan_results"] = orphans
        missing = [c.get("id") for c in calls if c.get("id") not in {m.get("tool_call_id") for m in rest}]
        if missing:
            meta["unpaired_tool_calls"] = missing
        action = "\n".join(
            action_text(str(_function(c).get("name", "")), _function(c).get("arguments"))
            if _function(c).get("arguments") is not None
            else str(_function(c).get("name", ""))
            for c in calls
        )
        if not calls and head.get("function_call"):  # the legacy single function_call field
            legacy = head["function_call"]
            action = action_text(str(legacy.get("name", "")), arguments_text(legacy.get("arguments")))
        return Step(
            thought=content_text(head.get("content")),
            action=action,
            observation=OBSERVATION_SEPARATOR.join(content_text(m.get("content")) for m in results),
            messages=tuple(turn),
            images=sum(count_images(m.get("content")) for m in rest),
            meta=meta,
        )


READER = OpenAIChatReader()
