"""LangChain v1 `create_agent` with the middleware, and LangGraph's prebuilt ReAct agent with the
pre-model hook: a scripted fake chat model (langchain-core's GenericFakeChatModel) calls a real
shell tool that fixes a toy repository; what the model receives before each call is checked."""

from __future__ import annotations

import subprocess
import warnings
from pathlib import Path
from typing import Any

import pytest

from tests.integrations.toyrepo import FIX_TURNS, TASK, make_repo

pytest.importorskip("langgraph")
pytest.importorskip("langchain.agents")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from pydantic import ValidationError  # noqa: E402

from contextweaver.integrations.langgraph import ContextWeaverHook, ContextWeaverMiddleware  # noqa: E402

PLACEHOLDER_START = "Old environment output: ("
TURNS = FIX_TURNS[:-1]


class ScriptedModel(GenericFakeChatModel):
    """langchain-core's fake chat model, keeping every message list it was sent (tools are scripted)."""

    sent: list[list[BaseMessage]] = []
    bound: list[Any] = []
    """The tools the agent bound (a chat model sends each as `convert_to_openai_tool` makes it)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        self.bound = list(tools)
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.sent.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def scripted_model() -> ScriptedModel:
    replies = [
        AIMessage(
            content=thought,
            tool_calls=[
                {"name": "shell", "args": {"command": command}, "id": f"call_{n}", "type": "tool_call"}
            ],
        )
        for n, (thought, command) in enumerate(TURNS, start=1)
    ]
    replies.append(AIMessage(content="Fixed add in calc.py."))
    return ScriptedModel(messages=iter(replies), sent=[])


def shell_tool(repo: Path):
    @tool
    def shell(command: str) -> str:
        """Run a shell command in the repository."""
        done = subprocess.run(command, shell=True, cwd=repo, capture_output=True, text=True, timeout=120)
        return f"{done.stdout}{done.stderr}"

    return shell


def check_last_request(sent: list[BaseMessage]) -> None:
    """Before the final answer: six tool steps done, W=2."""
    calls = [c["id"] for m in sent if m.type == "ai" for c in m.tool_calls]
    results = [m.tool_call_id for m in sent if m.type == "tool"]
    assert calls == results == [f"call_{n}" for n in range(1, len(TURNS) + 1)]
    outputs = {m.tool_call_id: str(m.content) for m in sent if m.type == "tool"}
    assert outputs["call_2"].startswith(PLACEHOLDER_START) and "1 failed" not in outputs["call_2"]
    assert not outputs["call_6"].startswith(PLACEHOLDER_START)
    status = [m for m in sent if m.type == "human" and str(m.content).startswith("TEST STATUS")]
    assert len(status) == 1 and "test_add: PASSED" in str(status[0].content)


@pytest.mark.slow
def test_langchain_v1_middleware_weaves_the_request_and_keeps_the_state(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    model = scripted_model()
    middleware = ContextWeaverMiddleware(strategy="cw-paper", window=2)
    agent = create_agent(model, [shell_tool(repo)], system_prompt="You fix bugs.", middleware=[middleware])
    result = agent.invoke({"messages": [{"role": "user", "content": TASK}]})
    assert "return a + b" in (repo / "calc.py").read_text()
    assert len(model.sent) == len(TURNS) + 1
    assert model.sent[0][0].type == "system" and model.sent[0][1].content == TASK
    check_last_request(model.sent[-1][1:])
    state = result["messages"]  # the graph's state keeps the full outputs
    assert any("1 failed" in str(m.content) for m in state if m.type == "tool")
    assert not any(str(m.content).startswith(PLACEHOLDER_START) for m in state)
    graph = middleware.weaver.conversation(state).feed.strategy.graph
    assert graph.node(2).validation_status == "superseded" and graph.node(2).superseded_by == 5
    assert middleware.weaver.conversation(state).feed.rebuilds == 0


@pytest.mark.slow
def test_langgraph_prebuilt_react_agent_with_the_pre_model_hook(tmp_path: Path):
    from langgraph.prebuilt import create_react_agent

    repo = make_repo(tmp_path / "repo")
    model = scripted_model()
    hook = ContextWeaverHook(strategy="cw-perstep", window=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent is deprecated in favour of create_agent
        agent = create_react_agent(model, [shell_tool(repo)], pre_model_hook=hook)
    result = agent.invoke({"messages": [{"role": "user", "content": TASK}]})
    assert "return a + b" in (repo / "calc.py").read_text()
    check_last_request(model.sent[-1])
    assert hook.last_context is not None and hook.last_context.tokens < hook.last_context.full_history_tokens
    assert len(result["messages"]) == 2 + 2 * len(TURNS)


def test_bad_settings_name_the_setting():
    with pytest.raises(ValidationError, match=r"weaver.selector\n.*unknown selector 'ancestr'"):
        ContextWeaverMiddleware(weaver={"selector": "ancestr"})
    with pytest.raises(ValidationError, match="windw"):
        ContextWeaverHook(windw=2)
