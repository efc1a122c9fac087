"""Each framework's integration takes the model's context window as the budget when none is given and
the framework knows it (litellm's model info for mini-swe-agent, the chat model's profile for LangChain,
the LLM config for OpenHands), says so, and records it; skipped where the framework is not installed."""

from __future__ import annotations

import os
from typing import Any

import pytest

from tests.integrations.announcements import LOGGER, fresh_announcements, warnings_of  # noqa: F401 (an autouse fixture)

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm's shipped map: no download


def test_mini_swe_agent_takes_litellms_window(caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("minisweagent")
    litellm = pytest.importorskip("litellm")
    from minisweagent.models.test_models import DeterministicModel

    from contextweaver.integrations.minisweagent import WeavingModel

    window = litellm.get_model_info("gpt-4o")["max_input_tokens"]
    model = WeavingModel(
        model=DeterministicModel(outputs=[], model_name="gpt-4o"), contextweaver={"window": 5}
    )
    assert model.settings.budget == window
    summary = model.summary()
    assert "gpt-4o" in summary["budget_from"] and "litellm" in summary["budget_from"]
    assert summary["settings"]["weaver"]["budget"] == window
    assert summary["effective"].startswith("contextweaver (selector adaptive, mode lazy")
    (said,) = warnings_of(caplog)
    assert f"budget {window:,} tokens" in said


def test_mini_swe_agent_with_an_unknown_model_says_nothing_is_cut(caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("minisweagent")
    from minisweagent.models.test_models import DeterministicModel

    from contextweaver.integrations.minisweagent import WeavingModel

    model = WeavingModel(model=DeterministicModel(outputs=[]), contextweaver={"window": 5})
    assert model.settings.budget is None and model.summary()["budget_from"] is None
    (said,) = warnings_of(caplog)
    assert said.startswith("ContextWeaver (mini-swe-agent)") and "nothing is cut" in said


def test_mini_swe_agent_keeps_a_budget_it_was_given(caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("minisweagent")
    pytest.importorskip("litellm")
    from minisweagent.models.test_models import DeterministicModel

    from contextweaver.integrations.minisweagent import WeavingModel

    inner = DeterministicModel(outputs=[], model_name="gpt-4o")
    model = WeavingModel(model=inner, contextweaver={"strategy": "cw-paper", "budget": 9000})
    assert model.settings.budget == 9000 and model.budget_from is None
    assert warnings_of(caplog) == []


def test_langchain_middleware_takes_the_profiles_window(caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("langchain.agents")
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    from contextweaver.integrations.langgraph import ContextWeaverMiddleware

    class Model(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Model:
            return self

    model = Model(messages=iter([AIMessage(content="done")]), profile={"max_input_tokens": 50000})
    middleware = ContextWeaverMiddleware(window=5)
    (at_start,) = warnings_of(caplog)
    assert "nothing is cut" in at_start and "profile" in at_start
    create_agent(model, [], middleware=[middleware]).invoke({"messages": [{"role": "user", "content": "hi"}]})
    assert middleware.weaver.budget == 50000 and middleware.last_context is not None
    tools = (
        middleware.weaver._tools_tokens
    )  # the recall tool's definition goes with every call, inside the budget
    assert tools > 0 and middleware.last_context.budget == 50000 - tools
    assert middleware.budget_from is not None and "50,000" in middleware.budget_from
    assert any("no budget was set" in w and "50,000" in w for w in warnings_of(caplog))


def test_langgraph_hook_says_at_construction(caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("langchain.agents")
    from contextweaver.integrations.langgraph import ContextWeaverHook

    ContextWeaverHook(window=5)
    (said,) = warnings_of(caplog)
    assert said.startswith("ContextWeaver (LangGraph pre_model_hook)") and "yours to set" in said


def test_openhands_condenser_takes_the_llms_max_input_tokens(caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip(
        "openhands.sdk",
        reason="the OpenHands SDK needs Python 3.12+: scripts/test.sh runs this in .venv-openhands",
    )
    from openhands.sdk import LLM
    from openhands.sdk.context.view import View
    from openhands.sdk.event import MessageEvent, SystemPromptEvent
    from openhands.sdk.llm import Message, TextContent

    from contextweaver.integrations.openhands import ContextWeaverCondenser

    condenser = ContextWeaverCondenser(contextweaver={"window": 5})
    assert any("max_input_tokens" in w for w in warnings_of(caplog))  # said at construction
    events = [
        SystemPromptEvent(system_prompt=TextContent(text="You fix bugs."), tools=[]),
        MessageEvent(source="user", llm_message=Message(role="user", content=[TextContent(text="Fix add")])),
    ]
    llm = LLM(model="gpt-4o", max_input_tokens=20000, usage_id="test")
    condenser.condense(View(events=events), agent_llm=llm)
    assert condenser.contextweaver.budget == 20000 and condenser.last_context is not None
    assert condenser.last_context.budget == 20000
    assert condenser.budget_from is not None and "20,000" in condenser.budget_from
    assert condenser.model_dump(mode="json")["contextweaver"]["weaver"]["budget"] == 20000


def test_mini_swe_agents_saved_config_has_the_budget_taken(tmp_path: Any) -> None:
    pytest.importorskip("minisweagent")
    litellm = pytest.importorskip("litellm")
    from minisweagent.environments.local import LocalEnvironment
    from minisweagent.models.test_models import DeterministicModel

    from contextweaver.integrations.minisweagent import ContextWeaverAgent

    window = litellm.get_model_info("gpt-4o")["max_input_tokens"]
    agent = ContextWeaverAgent(
        DeterministicModel(outputs=[], model_name="gpt-4o"),
        LocalEnvironment(cwd=str(tmp_path)),
        system_template="You fix bugs.",
        instance_template="{{task}}",
        contextweaver={"strategy": "cw-paper", "window": 5},
    )
    saved = agent.config.model_dump(mode="json")["contextweaver"]
    assert saved["weaver"]["budget"] == window
    assert (saved["weaver"]["selector"], saved["weaver"]["mode"]) == ("ancestry", "per_step")
