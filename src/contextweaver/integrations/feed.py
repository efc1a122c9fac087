"""Feed a growing agent chat to a strategy incrementally: only the messages added since the last call.

An agent's message list only grows during a run (system, task, then assistant turns with their
observations). Each call converts the new turns to Steps with the trajectory readers' own
step builders, so a live run and a replay of its saved trajectory see the same steps. The state
is checked against the list's prefix (each consumed message, by identity first); when it changed
(a new run, a rewritten history) the strategy is rebuilt from scratch and the rebuild is counted.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from contextweaver.formats.minisweagent import clean, text_step
from contextweaver.integrations.contexts import Source
from contextweaver.integrations.recall import answered_turn
from contextweaver.integrations.settings import WeavingSettings, build_strategy
from contextweaver.protocols import Model, Strategy
from contextweaver.records import Message, Node, Step, WovenContext
from contextweaver.tokens import content_text, count_images, count_text
from contextweaver.weaving.budget import Budget, BudgetError


def turn_step(turn: Sequence[Message], position: int) -> Step:
    """One assistant message and its observations as a Step, as the trajectory reader builds it."""
    return text_step(turn[0], turn[1:], position)


def interjection_step(message: Message, position: int) -> Step:
    """A message that follows no new assistant turn (a format-error notice, a person typing): kept verbatim."""
    return Step(
        observation=content_text(message.get("content")),
        messages=(message,),
        images=count_images(message.get("content")),
        kind="user",
        meta={"message_index": position, "role": message.get("role")},
    )


def tool_tokens(tools: Sequence[Any] | None) -> int:
    """Tokens of the tool definitions sent with every call (OpenAI's `tools` list), counted as the proxy
    counts them: the budget holds them too, so the woven messages get what is left."""
    return (
        _json_tokens(json.dumps(list(tools), ensure_ascii=False, sort_keys=True, default=str)) if tools else 0
    )


def budgeted_context(
    strategy: Strategy, budget: int | None, tools: int, setting: str = "budget"
) -> WovenContext:
    """The strategy's context for a budget its tool definitions share: the messages get the budget less
    what every call sends besides them, and a refusal names the value of `setting` that holds both."""
    if budget is None:
        return strategy.context(None)
    safety = getattr(getattr(strategy, "config", None), "token_safety_factor", 1.0)
    whole = Budget(budget, safety, tools, setting)
    try:
        return strategy.context(max(1, int(budget - whole.in_model_tokens(tools))))
    except BudgetError as exc:
        raise exc.restated(whole) from None


@lru_cache(maxsize=64)
def _json_tokens(text: str) -> int:
    """An agent sends the same tools with every call: counted once."""
    return count_text(text)


def same_message(a: Message, b: Message) -> bool:
    return a is b or a == b


def is_assistant(message: Message) -> bool:
    return message.get("role") == "assistant"


@dataclass(frozen=True)
class ChatShape:
    """How one framework's message list reads: where turns start, how a turn becomes a Step, what to keep."""

    starts_turn: Callable[[Message], bool] = is_assistant
    turn_step: Callable[[Sequence[Message], int], Step] = turn_step
    keep: Callable[[Message], Message] = clean
    """The message as it goes into the root or a user step (mini-swe-agent's `extra` is dropped)."""


MINI_SWE_AGENT = ChatShape()


class ChatFeed:
    """Owns one strategy per conversation and feeds it the new turns of the message list."""

    def __init__(
        self,
        settings: WeavingSettings,
        shape: ChatShape = MINI_SWE_AGENT,
        build: Callable[[WeavingSettings], tuple[Strategy, Model | None]] = build_strategy,
    ) -> None:
        self.settings = settings
        self.shape = shape
        self._build = build
        self.strategy: Strategy | None = None
        self.memory_model: Model | None = None
        self.consumed = 0
        """Messages of the list already turned into the root or steps."""
        self.rebuilds = 0
        self.reserved = 0
        """Tokens of what every call sends besides the messages (tool definitions): off the budget."""
        self._seen: list[Message] = []
        self._sources: dict[int, list[Source]] = {}
        """Per node index (0 = root): its messages and the list positions they came from."""

    def reset(self) -> None:
        self.strategy, self.memory_model, self.consumed, self._seen = None, None, 0, []
        self._sources = {}

    def _add(self, step: Step, turn: Sequence[Message], position: int) -> Node:
        """Add a step; remember where in the list each of its messages sits (for the contexts log)."""
        assert self.strategy is not None
        node = self.strategy.add_step(step)
        kept = [self.shape.keep(m) for m in turn]
        sources: list[Source] = []
        for message in step.chat_messages():
            offset = next((i for i, m in enumerate(kept) if m == message), None)
            sources.append((position + offset if offset is not None else None, message))
        self._sources[node.index] = sources
        return node

    def sources(self, context: WovenContext) -> list[Source]:
        """The messages a context can be made of, in order: root, then each step it did not drop."""
        out = list(self._sources.get(0, []))
        for decision in context.decisions:
            if decision.mode != "dropped":
                out.extend(self._sources.get(decision.index, []))
        return out

    def _prefix_holds(self, messages: Sequence[Message]) -> bool:
        """Every consumed message is still there: by identity (cheap, the usual case), else by value."""
        seen = self._seen
        return len(messages) >= len(seen) and all(
            same_message(a, b) for a, b in zip(messages, seen, strict=False)
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
            starts = self.shape.starts_turn
            first = next((i for i, m in enumerate(messages) if starts(m)), len(messages))
            root = [self.shape.keep(m) for m in messages[:first]]
            self.strategy.begin(root)
            self._sources[0] = list(enumerate(root))
            self.consumed = first
        added = []
        position, starts = self.consumed, self.shape.starts_turn
        while position < len(messages):
            if not starts(messages[position]):
                step = interjection_step(self.shape.keep(messages[position]), position)
                added.append(self._add(step, messages[position : position + 1], position))
                position += 1
                continue
            end = position + 1
            while end < len(messages) and not starts(messages[end]):
                end += 1
            turn = messages[position:end]
            added.append(self._add(self._step(turn, position), turn, position))
            position = end
        self.consumed = len(messages)
        self._seen.extend(messages[len(self._seen) :])
        return added

    def _step(self, turn: Sequence[Message], position: int) -> Step:
        """The turn as a step; a recall command's output is the recall answer (`integrations/recall.py`)."""
        step = self.shape.turn_step(turn, position)
        answered = answered_turn(self.strategy, step, turn)
        return step if answered is None else self.shape.turn_step(answered, position)

    def context(self) -> WovenContext:
        if self.strategy is None:
            raise RuntimeError("call update(messages) before context()")
        return budgeted_context(self.strategy, self.settings.budget, self.reserved)

    def stats(self) -> dict[str, Any]:
        own = self.strategy.stats() if self.strategy is not None else {}
        return {**own, "rebuilds": self.rebuilds, "tool_tokens": self.reserved}
