"""`contextweaver_recall`: an OpenHands SDK tool that returns steps the context left out or shortened, as the
model first saw them, from the memory of the agent's ContextWeaverCondenser (`ContextWeaver.recall`).

    agent = Agent(llm=llm, tools=[..., RECALL_TOOL], condenser=ContextWeaverCondenser())

The executor finds the condenser through the conversation it is called with (`conversation.agent.condenser`),
so the tool holds no state of its own. With the tool among the agent's tools the condenser turns recall on
(unless `recall` is set) and its notes point at the tool.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

from openhands.sdk.tool import (
    Action,
    Observation,
    Tool,
    ToolAnnotations,
    ToolDefinition,
    ToolExecutor,
    register_tool,
)
from pydantic import Field

from contextweaver.integrations.recall import TOOL

DESCRIPTION = (
    "Read again, as you first saw them, steps the context left out or shortened (the context names them "
    "`#N`), or search them by words of what you look for (an error, a file, a command)."
)


class RecallAction(Action):
    steps: str = Field(default="", description='the steps to read again: "12", "3-5" or "3-5,9"')
    query: str = Field(default="", description="instead of steps: words of what you look for")
    page: int = Field(default=1, ge=1, description="the next page of a long answer")


class RecallObservation(Observation):
    """The recalled steps, byte for byte, each under a line saying what it was."""


class RecallExecutor(ToolExecutor[RecallAction, RecallObservation]):
    def __call__(self, action: RecallAction, conversation: Any = None) -> RecallObservation:
        condenser = getattr(getattr(conversation, "agent", None), "condenser", None)
        recall = getattr(condenser, "recall", None)
        if not callable(recall):
            text = "contextweaver recall: the agent's condenser is not a ContextWeaverCondenser"
        else:
            text = str(recall(action.steps, action.page, action.query))
        return RecallObservation.from_text(text)


class RecallTool(ToolDefinition[RecallAction, RecallObservation]):
    name = TOOL

    @classmethod
    def create(cls, conv_state: Any = None, **params: Any) -> Sequence[Self]:
        if params:
            raise ValueError(f"{TOOL} takes no parameters, got {sorted(params)}")
        return [
            cls(
                description=DESCRIPTION,
                action_type=RecallAction,
                observation_type=RecallObservation,
                executor=RecallExecutor(),
                annotations=ToolAnnotations(title=TOOL, readOnlyHint=True, destructiveHint=False),
            )
        ]


register_tool(TOOL, RecallTool)
RECALL_TOOL = Tool(name=TOOL)
"""Add to the agent's `tools`: registered under its name when this module is imported."""
