"""OpenHands SDK condenser: ContextWeaver decides, before each LLM call, which events the agent sees.

    from contextweaver.integrations.openhands import ContextWeaverCondenser
    agent = Agent(llm=llm, tools=tools, condenser=ContextWeaverCondenser(contextweaver={"window": 5}))

With no budget the condenser takes the agent LLM's `max_input_tokens` at the first step (and says so);
an LLM config without it leaves the lazy default passing the history through whole, said as a WARNING.
The agent's tools, sent with every call, count against the budget: the view's SystemPromptEvent records
them, and they are counted in the form the agent LLM is sent them (chat or Responses tools).

`condense(view)` returns a new View (the SDK's event log is never touched): the system prompt and
task first, then every step in order, then the TEST STATUS line as a user message of its own (after
the task it would join the task's message, and every status change would rewrite message 1, breaking
the prompt cache's prefix). Calls of one model response and their results form one step (the SDK's batch atomicity), so a step is kept, compressed
or dropped whole and every tool call keeps exactly its result (tool-call matching). A compressed
step keeps its actions; each tool output becomes SWE-agent's placeholder. State is incremental: only
events new since the previous call become steps; a changed prefix rebuilds the graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import Field, PrivateAttr

from contextweaver.integrations import missing_framework

try:
    from openhands.sdk.context.condenser.base import CondenserBase
    from openhands.sdk.context.view import View
    from openhands.sdk.event import (
        ActionEvent,
        LLMConvertibleEvent,
        MessageEvent,
        ObservationBaseEvent,
        ObservationEvent,
        SystemPromptEvent,
    )
    from openhands.sdk.llm import LLM, Message, TextContent, content_to_str
    from openhands.sdk.tool.schema import Observation
except ImportError as exc:
    raise missing_framework(
        __name__, "the OpenHands SDK (Python 3.12+)", "pip install 'openhands-sdk>=1.50'", exc
    ) from exc

from contextweaver.formats.toolcalls import Call, action_text, tool_step
from contextweaver.integrations.contexts import align
from contextweaver.integrations.feed import budgeted_context, tool_tokens
from contextweaver.integrations.settings import WeavingSettings, announce, build_strategy
from contextweaver.protocols import Strategy
from contextweaver.records import Step, WovenContext


class WovenObservation(Observation):
    """A tool output as the woven context shows it: the placeholder, or its head/tail-trimmed text."""


def _text(event: LLMConvertibleEvent) -> str:
    """The event's text exactly as the SDK renders it for the LLM."""
    return "\n".join(content_to_str(event.to_llm_message().content))


@dataclass
class _Step:
    events: list[LLMConvertibleEvent] = field(default_factory=list)
    results: dict[str, ObservationBaseEvent] = field(default_factory=dict)

    @property
    def actions(self) -> list[ActionEvent]:
        return [e for e in self.events if isinstance(e, ActionEvent)]

    def complete(self) -> bool:
        return all(a.tool_call_id in self.results for a in self.actions)

    def step(self) -> Step:
        actions = self.actions
        if not actions:  # a message: the user's mid-run words are kept, the agent's are a thought
            event = self.events[0]
            user = isinstance(event, MessageEvent) and event.source == "user"
            return Step(observation=_text(event), kind="user") if user else Step(thought=_text(event))
        first = actions[0]
        thought = "\n".join(content_to_str(list(first.thought))) or (first.reasoning_content or "")
        calls = [
            Call(
                a.tool_call_id,
                a.tool_name,
                a.tool_call.arguments,
                action_text(a.tool_name, a.tool_call.arguments),
                _text(self.results[a.tool_call_id]),
            )
            for a in actions
        ]
        return tool_step(thought, calls)


class ContextWeaverCondenser(CondenserBase):
    """`condenser=` of an OpenHands SDK agent; `contextweaver` holds the usual weaving settings."""

    contextweaver: WeavingSettings = Field(default_factory=WeavingSettings)

    _strategy: Strategy | None = PrivateAttr(default=None)
    _seen: list[str] = PrivateAttr(default_factory=list)
    """Ids of the events already turned into the root or steps."""
    _steps: dict[int, _Step] = PrivateAttr(default_factory=dict)
    _root: list[LLMConvertibleEvent] = PrivateAttr(default_factory=list)
    _last: WovenContext | None = PrivateAttr(default=None)
    _rebuilds: int = PrivateAttr(default=0)
    _budget_from: str | None = PrivateAttr(default=None)
    _window_looked_up: bool = PrivateAttr(default=False)
    _reserved: int = PrivateAttr(default=0)

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        weaver = self.contextweaver.weaver
        if "recall" not in weaver.model_fields_set:  # no recall tool here yet: no handle to point at it
            self.contextweaver = self.contextweaver.model_copy(
                update={"weaver": weaver.model_copy(update={"recall": False})}
            )
        later = " unless the agent's LLM config gives max_input_tokens, read at the first step"
        announce("ContextWeaver (OpenHands condenser)", self.contextweaver, then=later)

    @property
    def budget_from(self) -> str | None:
        """Where the budget came from when none was given (the LLM's max_input_tokens), else None."""
        return self._budget_from

    def _take_window(self, llm: LLM | None) -> None:
        """With no budget given, the agent LLM's `max_input_tokens` becomes the budget (once)."""
        if self._window_looked_up or self.contextweaver.budget is not None:
            return
        self._window_looked_up = True
        window = getattr(llm, "max_input_tokens", None)
        if not isinstance(window, int) or window <= 0:
            announce(
                "ContextWeaver (OpenHands condenser)",
                self.contextweaver,
                then=" (the LLM config has no max_input_tokens)",
            )
            return
        self._budget_from = f"the agent LLM's max_input_tokens, {window:,} tokens"
        object.__setattr__(self, "contextweaver", self.contextweaver.with_budget(window))
        announce("ContextWeaver (OpenHands condenser)", self.contextweaver, self._budget_from)

    @property
    def reserved(self) -> int:
        """Tokens of the tool definitions every call sends: off the budget the events are woven to."""
        return self._reserved

    @property
    def rebuilds(self) -> int:
        """How often a changed event prefix made the graph start over."""
        return self._rebuilds

    @property
    def last_context(self) -> WovenContext | None:
        """The last woven context, with the decision and reason for every step."""
        return self._last

    def condense(self, view: View, agent_llm: LLM | None = None) -> View:
        self._take_window(agent_llm)
        events = list(view.events)
        ids = [e.id for e in events]
        if self._strategy is not None and ids[: len(self._seen)] != self._seen:
            self._strategy, self._seen, self._steps = None, [], {}
            self._rebuilds += 1
        if self._strategy is None:
            self._strategy, _ = build_strategy(self.contextweaver)
            self._root = _root_events(events)
            self._reserved = sent_tool_tokens(self._root, agent_llm)
            self._strategy.begin([{"role": e.to_llm_message().role, "content": _text(e)} for e in self._root])
            self._seen = [e.id for e in self._root]
        pending = self._consume(events[len(self._seen) :])
        context = budgeted_context(
            self._strategy, self.contextweaver.budget, self._reserved, "contextweaver.budget"
        )
        self._last = context
        return View(
            events=self._woven(context) + pending,
            unhandled_condensation_request=view.unhandled_condensation_request,
        )

    def _consume(self, new: list[LLMConvertibleEvent]) -> list[LLMConvertibleEvent]:
        """Add the complete steps among `new`; return the events left for later (a batch still running)."""
        assert self._strategy is not None
        batches: list[_Step] = []
        for event in new:
            if (
                isinstance(event, ObservationBaseEvent)
                and batches
                and event.tool_call_id not in batches[-1].results
            ):
                batches[-1].results[event.tool_call_id] = event
                batches[-1].events.append(event)
            elif (
                isinstance(event, ActionEvent)
                and batches
                and batches[-1].actions
                and batches[-1].actions[-1].llm_response_id == event.llm_response_id
            ):
                batches[-1].events.append(event)
            else:
                batches.append(_Step(events=[event]))
        for number, batch in enumerate(batches):
            if not batch.complete():
                return [e for b in batches[number:] for e in b.events]
            node = self._strategy.add_step(batch.step())
            self._steps[node.index] = batch
            self._seen.extend(e.id for e in batch.events)
        return []

    def _woven(self, context: WovenContext) -> list[LLMConvertibleEvent]:
        """The context as events: kept events verbatim, compressed outputs as WovenObservation."""
        assert self._strategy is not None
        nodes = {n.index: n for n in self._strategy.nodes}
        sources = [m for m in nodes[0].step.chat_messages()]
        owners: list[int] = [0] * len(sources)
        for decision in context.decisions:
            if decision.mode != "dropped":
                messages = nodes[decision.index].step.chat_messages()
                sources += messages
                owners += [decision.index] * len(messages)
        shown: dict[str, Any] = {}
        out: list[LLMConvertibleEvent] = list(self._root)
        status: list[LLMConvertibleEvent] = []
        for message, match in zip(context.messages, align(context.messages, sources), strict=True):
            if match is None:  # the TEST STATUS line
                status.append(_status_event(str(message.get("content"))))
            elif message.get("role") == "tool" and message != sources[match]:
                shown[str(message.get("tool_call_id"))] = message.get("content")
        for decision in context.decisions:
            if decision.mode == "dropped" or decision.index not in self._steps:
                continue
            for event in self._steps[decision.index].events:
                if isinstance(event, ObservationEvent) and event.tool_call_id in shown:
                    text = str(shown[event.tool_call_id])
                    observation = WovenObservation(content=[TextContent(text=text)])
                    event = event.model_copy(update={"observation": observation, "extended_content": []})
                out.append(event)
        return out + status  # after the last kept event: a new status never rewrites the task's message


def _root_events(events: list[LLMConvertibleEvent]) -> list[LLMConvertibleEvent]:
    """The system prompt and the task: everything before the first action or agent message."""
    root: list[LLMConvertibleEvent] = []
    for event in events:
        if isinstance(event, SystemPromptEvent) or (
            isinstance(event, MessageEvent)
            and event.source == "user"
            and not any(isinstance(e, MessageEvent) for e in root)
        ):
            root.append(event)
        else:
            break
    return root


def sent_tool_tokens(root: list[LLMConvertibleEvent], llm: LLM | None) -> int:
    """Tokens of the tools the agent sends with every call (its SystemPromptEvent lists them), converted as
    the agent LLM converts them: Responses tools on the Responses API, else chat tools; each with the
    security_risk argument the SDK's Agent always asks for."""
    tools: list[Any] = next((e.tools for e in root if isinstance(e, SystemPromptEvent)), [])
    responses = llm is not None and llm.uses_responses_api()
    return tool_tokens([t.to_responses_tool(True) if responses else t.to_openai_tool(True) for t in tools])


def _status_event(text: str) -> MessageEvent:
    return MessageEvent(
        source="user",
        llm_message=Message(role="user", content=[TextContent(text=text)]),
        id="contextweaver-test-status",
    )
