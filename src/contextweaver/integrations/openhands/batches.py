"""SDK events as steps: the calls of one model response and their results form one batch (one step), and
the batches from a response with thinking blocks to the next event that is neither a call nor a result
form one tool loop, which the SDK keeps or drops whole (`ToolLoopAtomicityProperty`: Anthropic checks the
thinking at a loop's start). An observation for a call that is already answered (crash recovery's late
original after its error) or was never made is no step: the SDK's own view drops it too."""

from __future__ import annotations

from dataclasses import dataclass, field

from openhands.sdk.event import (
    ActionEvent,
    CondensationSummaryEvent,
    LLMConvertibleEvent,
    MessageEvent,
    ObservationBaseEvent,
)
from openhands.sdk.llm import content_to_str

from contextweaver.formats.toolcalls import Call, action_text, tool_step
from contextweaver.records import Step


def event_text(event: LLMConvertibleEvent) -> str:
    """The event's text exactly as the SDK renders it for the LLM."""
    return "\n".join(content_to_str(event.to_llm_message().content))


@dataclass
class Batch:
    events: list[LLMConvertibleEvent] = field(default_factory=list)
    """The events the view shows for this step."""
    ids: list[str] = field(default_factory=list)
    """Every event id this batch consumed, in view order (with the duplicates it passes over)."""
    results: dict[str, ObservationBaseEvent] = field(default_factory=dict)

    def add(self, event: LLMConvertibleEvent) -> None:
        self.events.append(event)
        self.ids.append(event.id)
        if isinstance(event, ObservationBaseEvent):
            self.results[event.tool_call_id] = event

    @property
    def actions(self) -> list[ActionEvent]:
        return [e for e in self.events if isinstance(e, ActionEvent)]

    def awaits(self, call: str) -> bool:
        return call not in self.results and any(a.tool_call_id == call for a in self.actions)

    def complete(self) -> bool:
        return all(a.tool_call_id in self.results for a in self.actions)

    def thinks(self) -> bool:
        """Its response carries thinking blocks: a tool loop starts here."""
        return any(a.thinking_blocks for a in self.actions)

    def step(self) -> Step:
        """A person's message and a condensation's summary are always kept; the agent's words are a thought."""
        actions = self.actions
        if not actions:
            event = self.events[0]
            person = isinstance(event, MessageEvent) and event.source == "user"
            if person or isinstance(event, CondensationSummaryEvent):
                return Step(observation=event_text(event), kind="user")
            return Step(thought=event_text(event))
        first = actions[0]
        thought = "\n".join(content_to_str(list(first.thought))) or (first.reasoning_content or "")
        calls = [
            Call(
                a.tool_call_id,
                a.tool_name,
                a.tool_call.arguments,
                action_text(a.tool_name, a.tool_call.arguments),
                event_text(self.results[a.tool_call_id]),
            )
            for a in actions
        ]
        return tool_step(thought, calls)


def batches_of(events: list[LLMConvertibleEvent]) -> tuple[list[Batch], list[str]]:
    """The events grouped into batches, and the ids passed over before the first batch."""
    batches: list[Batch] = []
    before: list[str] = []
    for event in events:
        if isinstance(event, ObservationBaseEvent):
            owner = next((b for b in reversed(batches) if b.awaits(event.tool_call_id)), None)
            if owner is None:  # answered already, or never called
                (batches[-1].ids if batches else before).append(event.id)
            else:
                owner.add(event)
        elif (
            isinstance(event, ActionEvent)
            and batches
            and batches[-1].actions
            and batches[-1].actions[-1].llm_response_id == event.llm_response_id
        ):
            batches[-1].add(event)
        else:
            batches.append(Batch())
            batches[-1].add(event)
    return batches, before


def tool_loops(batches: dict[int, Batch]) -> list[list[int]]:
    """The step indices of each tool loop with more than one step, in order."""
    loops: list[list[int]] = []
    current: list[int] | None = None
    for index in sorted(batches):
        batch = batches[index]
        if batch.actions and batch.thinks():
            current = [index]
            loops.append(current)
        elif batch.actions and current is not None:
            current.append(index)
        else:
            current = None
    return [loop for loop in loops if len(loop) > 1]
