"""OpenHands SDK: the ContextWeaver condenser and the recall tool that reads its memory.

    from contextweaver.integrations.openhands import ContextWeaverCondenser, RECALL_TOOL
    agent = Agent(llm=llm, tools=[..., RECALL_TOOL], condenser=ContextWeaverCondenser(contextweaver={"window": 5}))

`condenser.py` decides which events the agent sees, `batches.py` groups events into steps and tool loops,
`recall_tool.py` is the `contextweaver_recall` tool.
"""

from __future__ import annotations

from contextweaver.integrations import missing_framework

try:
    import openhands.sdk  # noqa: F401
except ImportError as exc:
    raise missing_framework(
        __name__, "the OpenHands SDK (Python 3.12+)", "pip install 'openhands-sdk>=1.50'", exc
    ) from exc

from contextweaver.integrations.openhands.condenser import (
    ContextWeaverCondenser,
    WovenObservation,
    sent_tool_tokens,
)
from contextweaver.integrations.openhands.recall_tool import (
    RECALL_TOOL,
    RecallAction,
    RecallObservation,
    RecallTool,
)

__all__ = [
    "RECALL_TOOL",
    "ContextWeaverCondenser",
    "RecallAction",
    "RecallObservation",
    "RecallTool",
    "WovenObservation",
    "sent_tool_tokens",
]
