"""OpenHands SDK event streams made from recorded runs, stored as the SDK stores an Anthropic model without
interleaved thinking: a thinking block on the first response after each user message only, so every run of
calls between two user messages is one tool loop (`ToolLoopAtomicityProperty`). A stream also holds what a
long SDK run meets: a person's message mid-run, an earlier `Condensation` with its summary, a crash
recovery's error followed by the late original observation. Needs the SDK (imported by its tests only)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from openhands.sdk.context.view import View
from openhands.sdk.context.view.properties import ALL_PROPERTIES
from openhands.sdk.event import (
    ActionEvent,
    AgentErrorEvent,
    Condensation,
    Event,
    LLMConvertibleEvent,
    MessageEvent,
    ObservationBaseEvent,
    ObservationEvent,
    SystemPromptEvent,
)
from openhands.sdk.llm import Message, MessageToolCall, TextContent, ThinkingBlock
from openhands.sdk.tool import Action, Observation
from pydantic import Field

from contextweaver.formats import load_trajectory
from contextweaver.records import Step
from contextweaver.tokens import content_text, count_message

PERSON = "Please keep going, and run the tests before you finish."


class StreamAction(Action):
    command: str = Field(default="", description="the call's arguments as recorded")


class StreamObservation(Observation):
    pass


@dataclass(frozen=True)
class RecordedCall:
    id: str
    name: str
    arguments: str
    output: str


def calls_of(step: Step, number: int) -> list[RecordedCall]:
    """The step's tool calls with their outputs; a text-protocol step (mini-swe-agent) is one `bash` call."""
    assistant = step.messages[0] if step.messages else {}
    calls = assistant.get("tool_calls") or []
    outputs = {m.get("tool_call_id"): content_text(m.get("content")) for m in step.messages[1:]}
    recorded = [
        RecordedCall(
            str(c["id"]),
            str(c["function"]["name"]),
            str(c["function"]["arguments"]),
            outputs.get(c["id"], ""),
        )
        for c in calls
        if c.get("id") in outputs
    ]
    arguments = json.dumps({"command": step.action})
    return recorded or [RecordedCall(f"call_{number}", "bash", arguments, step.observation)]


def single_turn(run: Path) -> list[Event]:
    """The run as one turn: no person's message after the task, so every call is in the first tool loop."""
    never = 10**9
    return stream(run, person_every=never, crash_at=never, condense_at=never)


def sent_tokens(events: Sequence[LLMConvertibleEvent]) -> int:
    """Tokens of the events as the SDK sends them to a chat-completions LLM (one message per response)."""
    messages = LLMConvertibleEvent.events_to_messages(list(events))
    return sum(
        count_message(
            m.to_chat_dict(
                cache_enabled=False,
                vision_enabled=False,
                function_calling_enabled=True,
                force_string_serializer=True,
                send_reasoning_content=False,
            )
        )
        for m in messages
    )


def stream(run: Path, person_every: int = 10, crash_at: int = 4, condense_at: int = 13) -> list[Event]:
    """The run as SDK events, a person's message after every `person_every` steps. After step `condense_at` a
    Condensation forgets the first tool loop (steps 1 to `person_every`, as the SDK's own condensers forget
    whole loops) and leaves a summary after the system prompt and task; step `crash_at`'s call is answered
    by an AgentErrorEvent, its original observation arriving after the next step (crash recovery)."""
    trajectory = load_trajectory(run)
    system = content_text(trajectory.root[0].get("content"))
    task = content_text(trajectory.root[-1].get("content"))
    events: list[Event] = [
        SystemPromptEvent(system_prompt=TextContent(text=system), tools=[]),
        _said("user", task),
    ]
    thinking, late, forgotten = True, None, []
    for number, step in enumerate(trajectory.steps, 1):
        batch = _batch(step, number, thinking)
        thinking = False
        if number == crash_at:
            action = batch[0]
            assert isinstance(action, ActionEvent)
            late, original = (
                batch[-1],
                AgentErrorEvent(
                    tool_name=action.tool_name,
                    tool_call_id=action.tool_call_id,
                    error="the runtime restarted",
                ),
            )
            batch = [*batch[:-1], original]
        events += batch
        if number <= person_every:
            forgotten += [e.id for e in batch]
        if late is not None and number == crash_at + 1:
            events.append(late)
        if number == condense_at:
            events.append(
                Condensation(
                    forgotten_event_ids=set(forgotten),
                    summary=f"Summary of steps 1-{person_every}: the agent looked around the repository.",
                    summary_offset=2,
                    llm_response_id="condensation-1",
                )
            )
        if number % person_every == 0:
            events.append(_said("user", PERSON))
            thinking = True
    return events


def _said(source: str, text: str) -> MessageEvent:
    return MessageEvent(source=source, llm_message=Message(role=source, content=[TextContent(text=text)]))  # type: ignore[arg-type]


def _batch(step: Step, number: int, thinking: bool) -> list[Event]:
    actions: list[ActionEvent] = []
    observations: list[Event] = []
    for position, call in enumerate(calls_of(step, number)):
        first = position == 0
        action = ActionEvent(
            thought=[TextContent(text=step.thought)] if first and step.thought else [],
            thinking_blocks=[ThinkingBlock(thinking=f"thinking {number}", signature="sig")]
            if first and thinking
            else [],
            action=StreamAction(command=call.arguments),
            tool_name=call.name,
            tool_call_id=call.id,
            tool_call=MessageToolCall(
                id=call.id, name=call.name, arguments=call.arguments, origin="completion"
            ),
            llm_response_id=f"response-{number}",
        )
        actions.append(action)
        observations.append(
            ObservationEvent(
                tool_name=call.name,
                tool_call_id=call.id,
                observation=StreamObservation.from_text(call.output),
                action_id=action.id,
            )
        )
    return [*actions, *observations]


def call_points(events: Sequence[Event]) -> Iterator[int]:
    """Where the agent asks the LLM: after a person's message or once every call made so far is answered."""
    pending: set[str] = set()
    for position, event in enumerate(events, 1):
        if isinstance(event, ActionEvent):
            pending.add(event.tool_call_id)
        elif isinstance(event, ObservationBaseEvent):
            pending.discard(event.tool_call_id)
        if not pending and not isinstance(
            events[position] if position < len(events) else None, ObservationBaseEvent
        ):
            yield position


def broken_properties(view: Sequence[LLMConvertibleEvent], events: Sequence[Event]) -> dict[str, int]:
    """Each SDK view property the view breaks, with the number of events its enforcement would drop. A late
    duplicate observation is no event of the conversation here: the SDK drops it (ObservationUniqueness)
    and would otherwise drop its whole tool loop for missing it."""
    answered: set[str] = set()
    all_events = []
    for event in events:
        if isinstance(event, ObservationBaseEvent):
            if event.tool_call_id in answered:
                continue
            answered.add(event.tool_call_id)
        all_events.append(event)
    out = {}
    for prop in ALL_PROPERTIES:
        dropped = prop.enforce(list(view), all_events)
        if dropped:
            out[type(prop).__name__] = len(dropped)
    return out


def sdk_view(events: Sequence[Event]) -> View:
    """The view the SDK's agent hands its condenser: the state's cached view, built event by event as they
    arrive (condensations applied, no property enforced, so a late duplicate observation is in it)."""
    view = View()
    for event in events:
        view.append_event(event)
    return view
