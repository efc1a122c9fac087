"""Every context the LangGraph hook weaves from recorded runs passes LangChain's own checks: LangGraph's
`_validate_chat_history` (which `create_react_agent` runs on a pre-model hook's `llm_input_messages`: every
AIMessage tool call has its ToolMessage), the message classes' own validation, and
`convert_to_openai_messages` giving what the OpenAI API takes (each assistant's tool calls answered by the
tool messages right after it, no tool message without its call). Recorded mini-swe-agent runs become tool
calls, with a person's message now and then and a step of two parallel calls, at budgets that cut."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.shared_data import SHARED_DATA, absent

pytest.importorskip("langgraph")
pytest.importorskip("langchain.agents")

from langchain_core.messages import (  # noqa: E402
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_openai_messages,
)
from langgraph.prebuilt.chat_agent_executor import _validate_chat_history  # noqa: E402

from contextweaver.formats import load_trajectory  # noqa: E402
from contextweaver.integrations.langgraph import ContextWeaverHook  # noqa: E402
from contextweaver.tokens import content_text  # noqa: E402

RUNS = SHARED_DATA / "trajectories" / "mini-swe-agent"
PERSON = "Please keep going, and run the tests before you finish."


def runs(count: int) -> list[Path]:
    if not RUNS.exists():
        pytest.skip(absent(RUNS))
    return sorted(RUNS.glob("*.traj.json"))[:count]


def conversation(run: Path, person_every: int = 10, parallel_every: int = 7) -> list[BaseMessage]:
    """The run as LangChain messages: one bash call per step (two on every `parallel_every`-th)."""
    trajectory = load_trajectory(run)
    messages: list[BaseMessage] = [
        SystemMessage(content_text(trajectory.root[0].get("content"))),
        HumanMessage(content_text(trajectory.root[-1].get("content"))),
    ]
    for number, step in enumerate(trajectory.steps, 1):
        calls = [(f"call_{number}", step.action, step.observation)]
        if number % parallel_every == 0:
            calls.append((f"call_{number}_b", "git status --short", ""))
        tool_calls = [
            {"id": i, "name": "bash", "args": {"command": c}, "type": "tool_call"} for i, c, _ in calls
        ]
        messages.append(AIMessage(content=step.thought, tool_calls=tool_calls))
        messages += [ToolMessage(content=out, tool_call_id=i) for i, _, out in calls]
        if number % person_every == 0:
            messages.append(HumanMessage(PERSON))
    return messages


def openai_rejects(messages: list[dict[str, Any]]) -> list[str]:
    """What the Chat Completions API refuses: a tool message whose call is not the assistant message's just
    before it (or an earlier tool message's), or a call left unanswered before the next other message."""
    problems, open_calls = [], set()
    for position, message in enumerate(messages):
        if message["role"] == "tool":
            if message.get("tool_call_id") not in open_calls:
                problems.append(f"message {position}: tool result without its call just before it")
            open_calls.discard(message.get("tool_call_id"))
            continue
        if open_calls:
            problems.append(f"message {position}: calls {sorted(open_calls)} unanswered")
        open_calls = {c["id"] for c in message.get("tool_calls") or ()}
    if open_calls:
        problems.append(f"calls {sorted(open_calls)} unanswered at the end")
    return problems


def every_context(run: Path, budget: int) -> list[list[BaseMessage]]:
    """The woven messages before each model call (after every step's results and every person's message)."""
    hook = ContextWeaverHook(budget=budget, tools=[])
    history = conversation(run)
    points = [k for k in range(2, len(history) + 1) if not isinstance(history[k - 1], AIMessage)]
    points = [k for k in points if k == len(history) or not isinstance(history[k], ToolMessage)]
    return [hook({"messages": history[:k]})["llm_input_messages"] for k in points]


@pytest.mark.parametrize("budget", [5000, 9000, 30_000])
@pytest.mark.parametrize("run", runs(2), ids=lambda p: p.name.split(".")[0])
def test_every_woven_context_passes_langchains_checks(run: Path, budget: int) -> None:
    contexts = every_context(run, budget)
    full = conversation(run)
    assert len(contexts) > 10
    for number, woven in enumerate(contexts):
        _validate_chat_history(woven)  # LangGraph's: raises INVALID_CHAT_HISTORY
        for message in woven:
            type(message).model_validate(message.model_dump())  # the message classes' own validation
        sent = convert_to_openai_messages(woven)
        assert openai_rejects(sent) == [], number
        assert sent[:2] == convert_to_openai_messages(full[:2])  # the system prompt and task, verbatim
    placeholders = sum("Old environment output" in str([m.content for m in w]) for w in contexts)
    assert placeholders > 0 if budget < 30_000 else placeholders == 0  # the smaller budgets cut
