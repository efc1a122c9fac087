"""Feed a growing agent chat to a strategy incrementally: only the messages added since the last call.

An agent's message list only grows during a run (system, task, then assistant turns with their
observations). Each call converts the new turns to Steps with the trajectory readers' own
step builders, so a live run and a replay of its saved trajectory see the same steps. The state
is checked against the list's prefix (first and last consumed message); when the prefix changed
(a new run, a rewritten history) the strategy is rebuilt from scratch and the rebuild is counted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from contextweaver.formats.minisweagent import READER as TEXT_PROTOCOL
from contextweaver.formats.minisweagent import clean
from contextweaver.formats.openai import READER as TOOL_CALLS
from contextweaver.integrations.settings import WeavingSettings, build_strategy
from contextweaver.protocols import Model, Strategy
from contextweaver.tokens import content_text, count_images
from contextweaver.types import Message, Node, Step, WovenContext


def turn_step(turn: Sequence[Message], position: int) -> Step:
    """One assistant message and its observations as a Step (tool calling or the text protocol)."""
    assistant, observations = clean(turn[0]), [clean(m) for m in turn[1:]]
    if assistant.get("tool_calls"):
        step = TOOL_CALLS._step([assistant, *observations])
        return replace(step, meta={**step.meta, "message_index": position})
    return TEXT_PROTOCOL._step(assistant, observations, position)


def interjection_step(message: Message, position: int) -> Step:
    """A message that follows no new assistant turn (a format-error notice, a person typing): kept verbatim."""
    return Step(
        observation=content_text(message.get("content")),
        messages=(clean(message),),
        images=count_images(message.get("content")),
        kind="user",
        meta={"message_index": position, "role": message.get("role")},
    )


def same_message(a: Message, b: Message) -> bool:
    return a is b or a == b


class ChatFeed:
    """Owns one strategy per conversation and feeds it the new turns of the message list."""

    def __init__(
        self,
        settings: WeavingSettings,
        build: Callable[[WeavingSettings], tuple[Strategy, Model | None]] = build_strategy,
    ) -> None:
        self.settings = settings
        self._build = build
        self.strategy: Strategy | None = None
        self.memory_model: Model | None = None
        self.consumed = 0
        """Messages of the list already turned into the root or steps."""
        self.rebuilds = 0
        self._anchors: tuple[Message, Message] | None = None

    def reset(self) -> None:
        self.strategy, self.memory_model, self.consumed, self._anchors = None, None, 0, None

    def _prefix_holds(self, messages: Sequence[Message]) -> bool:
        if self._anchors is None:
            return True
        first, last = self._anchors
        return (
            len(messages) >= self.consumed
            and same_message(messages[0], first)
            and same_message(messages[self.consumed - 1], last)
        )

    def update(self, messages: Sequence[Message]) -> list[Node]:
        """Add the steps new since the last call; returns the nodes added."""
        if not messages:
            raise ValueError("no messages to weave: the agent has not added its system prompt and task yet")
        if self.strategy is not None and not self._prefix_holds(messages):
            self.reset()
            self.rebuilds += 1
        if self.strategy is None:
            self.strategy, self.memory_model = self._build(self.settings)
            first = next((i for i, m in enumerate(messages) if m.get("role") == "assistant"), len(messages))
            self.strategy.begin([clean(m) for m in messages[:first]])
            self.consumed = first
        added = []
        position = self.consumed
        while position < len(messages):
            if messages[position].get("role") != "assistant":
                added.append(self.strategy.add_step(interjection_step(messages[position], position)))
                position += 1
                continue
            end = position + 1
            while end < len(messages) and messages[end].get("role") != "assistant":
                end += 1
            added.append(self.strategy.add_step(turn_step(messages[position:end], position)))
            position = end
        self.consumed = len(messages)
        self._anchors = (messages[0], messages[-1])
        return added

    def context(self) -> WovenContext:
        if self.strategy is None:
            raise RuntimeError("call update(messages) before context()")
        return self.strategy.context(self.settings.budget)

    def stats(self) -> dict[str, Any]:
        stats: Any = getattr(self.strategy, "stats", None)
        return {**(stats() if callable(stats) else {}), "rebuilds": self.rebuilds}
