"""The OpenHands SDK condenser end to end: the SDK's own Agent and Conversation loop fix a toy repository
with a shell tool, the LLM is reached over real HTTP (litellm -> a local fake OpenAI server scripted
with tool calls), and every request the model receives is checked. Skipped where the SDK is not
installed (it needs Python 3.12; scripts/setup.sh makes a second venv for it under FULL=1)."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Self

import pytest

from tests.integrations.toyrepo import FIX_TURNS, TASK, make_repo

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm: no cost-map download
pytest.importorskip("openhands.sdk")

from openhands.sdk import LLM, Agent, Conversation, Tool  # noqa: E402
from openhands.sdk.context.condenser.base import NoCondensationAvailableException  # noqa: E402
from openhands.sdk.conversation.exceptions import ConversationRunError  # noqa: E402
from openhands.sdk.tool import Action, Observation, ToolDefinition, ToolExecutor, register_tool  # noqa: E402
from pydantic import Field, SecretStr, ValidationError  # noqa: E402

from contextweaver.integrations.feed import tool_tokens  # noqa: E402
from contextweaver.integrations.openhands import RECALL_TOOL, ContextWeaverCondenser  # noqa: E402
from contextweaver.testing.fake_server import FakeLLMServer, Reply, Request  # noqa: E402
from contextweaver.testing.fake_wire import responses_object  # noqa: E402
from contextweaver.tokens import count_message  # noqa: E402

PLACEHOLDER_START = "Old environment output: ("


class ShellAction(Action):
    command: str = Field(description="the shell command to run")


class ShellObservation(Observation):
    pass


class ShellExecutor(ToolExecutor):
    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd

    def __call__(self, action: ShellAction, conversation: Any = None) -> ShellObservation:
        done = subprocess.run(
            action.command, shell=True, cwd=self.cwd, capture_output=True, text=True, timeout=120
        )
        return ShellObservation.from_text(f"{done.stdout}{done.stderr}\n[exit code {done.returncode}]")


class ShellTool(ToolDefinition[ShellAction, ShellObservation]):
    @classmethod
    def create(cls, conv_state: Any = None, **params: Any) -> Sequence[Self]:
        return [
            cls(
                description="Run a shell command in the repository.",
                action_type=ShellAction,
                observation_type=ShellObservation,
                executor=ShellExecutor(Path(params["cwd"])),
            )
        ]


def tool_call_reply(number: int, thought: str, name: str, arguments: dict[str, Any]) -> Reply:
    call = {
        "id": f"call_{number}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    message = {"role": "assistant", "content": thought, "tool_calls": [call]}
    body = {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 0,
        "model": "fake",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    return Reply(body=body)


TURNS = [(thought, "shell", {"command": command}) for thought, command in FIX_TURNS[:-1]]
TURNS.append(("The fix is in and the tests pass.", "finish", {"message": "Fixed add in calc.py."}))


def scripted() -> Callable[[Request], Reply]:
    """The turns in order, one per request (a woven request may hold fewer of the earlier turns)."""
    numbers = itertools.count(1)

    def reply(request: Request) -> Reply:
        number = next(numbers)
        return tool_call_reply(number, *TURNS[min(number, len(TURNS)) - 1])

    return reply


def run_agent(
    repo: Path,
    condenser: ContextWeaverCondenser,
    reply: Callable[[Request], Reply] | None = None,
    extra_tools: Sequence[Tool] = (),
    **llm: Any,
) -> list[Request]:
    """The SDK's own agent loop on the toy repository; returns every request the model received."""
    register_tool("ToyShell", ShellTool)
    with FakeLLMServer(reply=reply or scripted()) as server:
        llm = LLM(
            model="openai/fake", base_url=server.base_url, api_key=SecretStr("x"), usage_id="agent", **llm
        )
        agent = Agent(
            llm=llm,
            tools=[Tool(name="ToyShell", params={"cwd": str(repo)}), *extra_tools],
            include_default_tools=["FinishTool"],
            condenser=condenser,
        )
        conversation = Conversation(agent=agent, workspace=str(repo), visualizer=None)
        conversation.send_message(TASK)
        conversation.run()
        return list(server.requests)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory):
    repo = make_repo(tmp_path_factory.mktemp("openhands") / "repo")
    condenser = ContextWeaverCondenser(contextweaver={"strategy": "cw-paper", "window": 2})
    return condenser, run_agent(repo, condenser), repo


def test_the_agent_loop_fixes_the_repository(run):
    _, requests, repo = run
    assert "return a + b" in (repo / "calc.py").read_text()
    assert len(requests) == len(TURNS)  # one model call per scripted turn, the last one finishes


def test_each_request_is_the_woven_context_with_every_call_paired(run):
    _, requests, _ = run
    last = requests[-1].messages  # before `finish`: six shell steps done, W=2
    calls = [c["id"] for m in last if m["role"] == "assistant" for c in m.get("tool_calls") or ()]
    results = [m["tool_call_id"] for m in last if m["role"] == "tool"]
    assert calls == results == [f"call_{n}" for n in range(1, len(TURNS))]
    outputs = {m["tool_call_id"]: str(m["content"]) for m in last if m["role"] == "tool"}
    assert "1 failed" not in outputs["call_2"] and PLACEHOLDER_START in outputs["call_2"]  # superseded run
    assert PLACEHOLDER_START not in outputs["call_6"]  # the current step is kept in full
    assert any("TEST STATUS" in str(m["content"]) and "test_add: PASSED" in str(m["content"]) for m in last)
    first_tool_request = requests[1].messages
    assert not any(PLACEHOLDER_START in str(m.get("content")) for m in first_tool_request)


def test_the_test_status_follows_the_last_step_and_never_rewrites_the_task(run):
    _, requests, _ = run
    with_status = [
        r.messages for r in requests if any("TEST STATUS" in str(m["content"]) for m in r.messages)
    ]
    assert len(with_status) >= 2  # the failing run, then the passing one
    for messages in with_status:
        assert "TEST STATUS" in str(messages[-1]["content"]) and messages[-1]["role"] == "user"
        assert not any("TEST STATUS" in str(m["content"]) for m in messages[:-1])
    tasks = {json.dumps(r.messages[1], sort_keys=True) for r in requests}
    assert len(tasks) == 1 and TASK in next(iter(tasks))  # message 1 is the task, byte-identical every call


def test_the_graph_labels_the_failure_superseded_by_the_passing_run(run):
    condenser, _, _ = run
    graph = condenser._strategy.graph
    assert [n.step.action for n in graph.nodes[1:]] == [command for _, command in FIX_TURNS[:-1]]
    assert graph.node(2).validation_status == "superseded" and graph.node(2).superseded_by == 5
    assert condenser.rebuilds == 0
    kept = {d.index for d in condenser.last_context.decisions if d.mode == "full"}
    assert kept == {6, *graph.ancestry(6, 2)}


def test_the_tools_the_llm_is_sent_count_against_the_budget(run, tmp_path: Path):
    condenser, requests, _ = run
    tools = tool_tokens(requests[0].body["tools"])  # as the LLM received them: schemas, security_risk
    assert condenser.reserved == tools > 100
    root = sum(count_message(m) for m in requests[0].messages)
    budget = root + tools + 300  # the tools take a sizeable share of what the root leaves
    budgeted = ContextWeaverCondenser(contextweaver={"strategy": "cw-paper", "budget": budget})
    sent = run_agent(make_repo(tmp_path / "repo"), budgeted)
    assert len(sent) == len(TURNS) and budgeted.reserved == tools
    sizes = [sum(count_message(m) for m in request.messages) for request in sent]
    assert all(size + tools <= budget for size in sizes)
    assert sizes[-1] > budget - tools - 150  # the rest of the budget is used
    assert sum(count_message(m) for m in requests[-1].messages) + tools > budget  # it had to cut


def test_on_the_responses_api_its_tools_are_counted_as_that_api_is_sent_them(tmp_path: Path):
    finish = {
        "type": "function_call",
        "call_id": "call_1",
        "name": "finish",
        "arguments": '{"message": "done"}',
    }
    condenser = ContextWeaverCondenser(contextweaver={"budget": 20_000})
    answer = Reply(body=responses_object("fake", [finish]))
    (request,) = run_agent(make_repo(tmp_path / "repo"), condenser, lambda _: answer, api_mode="responses")
    assert request.path.endswith("/responses") and "name" in request.body["tools"][0]  # Responses tools
    assert condenser.reserved == tool_tokens(request.body["tools"])


def test_bad_settings_name_the_setting():
    with pytest.raises(ValidationError, match=r"weaver.analyzer\n.*unknown analyzer 'heurstic'"):
        ContextWeaverCondenser(contextweaver={"analyzer": "heurstic"})
    with pytest.raises(ValidationError, match="`options` is no longer read"):
        ContextWeaverCondenser(contextweaver={"options": {"selector": "ancestry"}})


def test_the_condenser_survives_the_agents_serialization():
    condenser = ContextWeaverCondenser(contextweaver={"window": 3})
    agent_llm = LLM(
        model="openai/fake", base_url="http://127.0.0.1:9/v1", api_key=SecretStr("x"), usage_id="a"
    )
    agent = Agent(llm=agent_llm, tools=[], condenser=condenser)
    restored = Agent.model_validate_json(agent.model_dump_json())
    assert isinstance(restored.condenser, ContextWeaverCondenser)
    assert restored.condenser.contextweaver.weaver.window == 3


def test_after_a_cut_the_recall_tool_returns_the_omitted_output_byte_for_byte(tmp_path: Path):
    """The SDK's own loop: the model asks `contextweaver_recall` for the superseded failing run (step 2, a
    placeholder by then) and the next request carries that output exactly as the model first saw it."""
    turns = [*TURNS[:-1], ("Read the failing run again.", "contextweaver_recall", {"steps": "2"}), TURNS[-1]]
    numbers = itertools.count(1)

    def reply(request: Request) -> Reply:
        number = next(numbers)
        return tool_call_reply(number, *turns[min(number, len(turns)) - 1])

    condenser = ContextWeaverCondenser(contextweaver={"strategy": "cw-paper", "window": 2})
    requests = run_agent(make_repo(tmp_path / "repo"), condenser, reply, extra_tools=[RECALL_TOOL])
    assert len(requests) == len(turns)
    assert "contextweaver_recall" in {t["function"]["name"] for t in requests[0].body["tools"]}

    def output(request: Request, call: str) -> str:
        content = next(m["content"] for m in request.messages if m.get("tool_call_id") == call)
        return "".join(p["text"] for p in content) if isinstance(content, list) else str(content)

    first_seen = output(requests[2], "call_2")  # the failing run, in full the call after it ran
    assert "1 failed" in first_seen
    before = output(requests[-2], "call_2")
    assert PLACEHOLDER_START in before and "#2" in before  # the placeholder names its step
    recalled = output(requests[-1], f"call_{len(turns) - 1}")
    assert first_seen in recalled  # byte for byte


def test_without_the_tool_recall_stays_off_and_the_notes_name_no_tool(run):
    condenser, requests, _ = run
    assert not condenser._strategy.config.recall
    assert "contextweaver_recall" not in json.dumps(requests[-1].messages)


ITERATIONS = 40
TOO_LONG = Reply(  # a context-window refusal, as OpenAI words it: the SDK asks the condenser to condense
    status=400,
    body={
        "error": {
            "message": "This model's maximum context length is 8192 tokens. Please reduce the length.",
            "type": "invalid_request_error",
            "code": "context_length_exceeded",
        }
    },
)


def run_until_done(
    repo: Path, condenser: ContextWeaverCondenser, reply: Callable[[Request], Reply]
) -> tuple[list[Request], BaseException | None]:
    """The SDK's own agent loop (at most ITERATIONS steps) with no retries: every request the model received,
    and what the run raised, if anything."""
    register_tool("ToyShell", ShellTool)
    with FakeLLMServer(reply=reply) as server:
        llm = LLM(
            model="openai/fake",
            base_url=server.base_url,
            api_key=SecretStr("x"),
            usage_id="agent",
            num_retries=0,
        )
        agent = Agent(
            llm=llm,
            tools=[Tool(name="ToyShell", params={"cwd": str(repo)})],
            include_default_tools=["FinishTool"],
            condenser=condenser,
        )
        conversation = Conversation(
            agent=agent, workspace=str(repo), visualizer=None, max_iteration_per_run=ITERATIONS
        )
        conversation.send_message(TASK)
        try:
            conversation.run()
        except ConversationRunError as exc:
            return list(server.requests), exc
        return list(server.requests), None


def test_a_refusal_the_condenser_cannot_answer_ends_the_run_once(tmp_path: Path) -> None:
    """The first request (the root alone, which no condensation can shrink) is refused as too long: it was
    resent until the iteration limit (20 refusals in 40 iterations, each answered by an empty Condensation)."""
    condenser = ContextWeaverCondenser(contextweaver={"budget": 20_000})
    requests, raised = run_until_done(make_repo(tmp_path / "repo"), condenser, lambda _: TOO_LONG)
    assert len(requests) == 1
    assert raised is not None and isinstance(raised.original_exception, NoCondensationAvailableException)
    message = str(raised.original_exception)
    assert "cannot be condensed further" in message and "max_input_tokens" in message
