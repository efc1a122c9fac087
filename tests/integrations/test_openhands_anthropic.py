"""The SDK's own agent loop on Anthropic's Messages API with extended thinking, through the condenser under a
budget that makes it cut: litellm sends every request over real HTTP to a local server that answers as
Claude does without interleaved thinking (a thinking block on the first response after a person's message
only). Each request must be one Anthropic accepts: every tool_use answered by a tool_result in the next
message, and the assistant message that opens the current tool loop starting with its thinking block (else
"a final assistant message must start with a thinking block")."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.integrations.toyrepo import FIX_TURNS, TASK, make_repo

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
pytest.importorskip("openhands.sdk")

from openhands.sdk import LLM, Agent, Conversation, Tool  # noqa: E402
from openhands.sdk.tool import register_tool  # noqa: E402
from pydantic import SecretStr  # noqa: E402

from contextweaver.integrations.openhands import ContextWeaverCondenser  # noqa: E402
from contextweaver.testing.fake_server import FakeLLMServer, Reply, Request  # noqa: E402
from contextweaver.testing.fake_wire import anthropic_message  # noqa: E402
from tests.integrations.test_openhands_condenser import ShellTool  # noqa: E402

MODEL = "claude-sonnet-4-5-20250929"
AGAIN = "Now run the whole test file once more and show the diff."
SECOND = [("Run every test.", FIX_TURNS[4][1]), ("Show the diff.", "git diff")]


def turns() -> list[tuple[str, str, dict[str, Any]]]:
    first = [(thought, "shell", {"command": command}) for thought, command in FIX_TURNS[:-1]]
    second = [(thought, "shell", {"command": command}) for thought, command in SECOND]
    done = ("Done.", "finish", {"message": "Fixed add in calc.py."})
    return [*first, done, *second, done]


def said_by_the_person(message: dict[str, Any]) -> bool:
    """A user message holding what the person wrote (litellm puts it beside the last call's tool_result); the
    condenser's notes (TEST STATUS, working state) are no new instruction and open no tool loop."""
    return message["role"] == "user" and any(b.get("text") in (TASK, AGAIN) for b in blocks(message))


def claude(script: list[tuple[str, str, dict[str, Any]]]):
    numbers = itertools.count(1)

    def reply(request: Request) -> Reply:
        number = next(numbers)
        thought, name, arguments = script[min(number, len(script)) - 1]
        thinking = [{"type": "thinking", "thinking": f"plan {number}", "signature": f"sig{number}"}]
        answer = [{"type": "text", "text": thought}, {"type": "tool_use", "id": f"toolu_{number}",
                  "name": name, "input": arguments}]  # fmt: skip
        opens = said_by_the_person(request.body["messages"][-1])
        return Reply(body=anthropic_message(MODEL, [*(thinking if opens else []), *answer]))

    return reply


def blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message["content"]
    return content if isinstance(content, list) else [{"type": "text", "text": content}]


def anthropic_rejects(messages: list[dict[str, Any]]) -> list[str]:
    """What the Messages API with thinking on would refuse in `messages` (an empty list: nothing)."""
    problems = []
    for position, message in enumerate(messages):
        uses = [b["id"] for b in blocks(message) if b.get("type") == "tool_use"]
        after = messages[position + 1] if position + 1 < len(messages) else None
        answered = (
            [b["tool_use_id"] for b in blocks(after) if b.get("type") == "tool_result"] if after else []
        )
        if message["role"] == "assistant" and sorted(uses) != sorted(answered):
            problems.append(f"message {position}: tool_use {uses} answered by {answered}")
    loop_start = None  # the first assistant message after the person's last message
    for position, message in enumerate(messages):
        if said_by_the_person(message):
            loop_start = None
        elif message["role"] == "assistant" and loop_start is None:
            loop_start = position
    if loop_start is not None and blocks(messages[loop_start])[0].get("type") != "thinking":
        problems.append(f"message {loop_start} opens the tool loop without its thinking block")
    return problems


def run_claude(repo: Path, condenser: ContextWeaverCondenser) -> list[Request]:
    register_tool("ToyShell", ShellTool)
    with FakeLLMServer(reply=claude(turns())) as server:
        llm = LLM(model=f"anthropic/{MODEL}", base_url=server.url, api_key=SecretStr("x"), usage_id="agent")
        tools = [Tool(name="ToyShell", params={"cwd": str(repo)})]
        agent = Agent(llm=llm, tools=tools, include_default_tools=["FinishTool"], condenser=condenser)
        conversation = Conversation(agent=agent, workspace=str(repo), visualizer=None)
        conversation.send_message(TASK)
        conversation.run()
        conversation.send_message(AGAIN)
        conversation.run()
        return list(server.requests)


@pytest.mark.parametrize("budget", [4200, 4600])
def test_every_request_under_a_cutting_budget_is_one_anthropic_accepts(tmp_path: Path, budget: int) -> None:
    condenser = ContextWeaverCondenser(contextweaver={"budget": budget})
    requests = run_claude(make_repo(tmp_path / "repo"), condenser)
    assert len(requests) == len(turns()) and "return a + b" in (tmp_path / "repo" / "calc.py").read_text()
    assert all(r.body.get("thinking", {}).get("type") == "enabled" for r in requests)  # thinking is on
    thinking = [
        r for r in requests if any(b.get("type") == "thinking" for m in r.body["messages"] for b in blocks(m))
    ]
    assert len(thinking) >= len(requests) - 2  # the thinking blocks go back to the model
    for number, request in enumerate(requests, 1):
        assert anthropic_rejects(request.body["messages"]) == [], number
    uses = [sum(b.get("type") == "tool_use" for m in r.body["messages"] for b in blocks(m)) for r in requests]
    placeholders = ["Old environment output" in json.dumps(r.body["messages"]) for r in requests]
    assert sum(n < number for number, n in enumerate(uses)) + sum(placeholders) >= 2  # the budget made it cut


def test_a_turn_too_long_to_send_whole_is_sent_as_text_and_the_run_goes_on(tmp_path: Path) -> None:
    """At 4000 the first turn's placeholders no longer fit beside its newest call: that request carries the
    turn as text in a user message after the context (none of its tool_use blocks), Anthropic accepts every
    request, and the run finishes. The run failed there, the view refused with "raise the budget to 4100"."""
    condenser = ContextWeaverCondenser(contextweaver={"budget": 4000})
    requests = run_claude(make_repo(tmp_path / "repo"), condenser)
    assert len(requests) == len(turns()) and "return a + b" in (tmp_path / "repo" / "calc.py").read_text()
    as_text = [r for r in requests if "Your calls since the last message" in json.dumps(r.body["messages"])]
    assert as_text
    for request in as_text:
        last = request.body["messages"][-1]
        assert last["role"] == "user" and "Your calls since the last message" in json.dumps(last)
    for number, request in enumerate(requests, 1):
        assert anthropic_rejects(request.body["messages"]) == [], number
