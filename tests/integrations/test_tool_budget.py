"""Tool definitions count against the budget: mini-swe-agent's tool-calling model classes (their
BASH_TOOL), LangChain's bound tools, and the tools a LangGraph pre_model_hook is given. With a budget the
tools nearly fill, the woven messages get what is left, so messages plus tools stay within it. (SWE-agent
and OpenHands: in their own test files, which need those frameworks.)"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import pytest

from contextweaver.integrations.feed import tool_tokens
from contextweaver.tokens import count_message
from tests.integrations.announcements import fresh_announcements, warnings_of  # noqa: F401 (an autouse fixture)

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm's shipped map: no download
pytest.importorskip("minisweagent")

from minisweagent.models.litellm_model import LitellmModel  # noqa: E402
from minisweagent.models.utils.actions_toolcall import BASH_TOOL  # noqa: E402

from contextweaver.integrations.minisweagent import WeavingModel, sent_tools  # noqa: E402

SYSTEM = {"role": "system", "content": "You are a helpful assistant that can interact with a computer."}
TASK = {"role": "user", "content": "Please solve this issue: test_add fails."}


def turns(count: int) -> list[dict]:
    out = []
    for n in range(1, count + 1):
        command = f"cat src/part_{n}.py"
        call = {"id": f"c{n}", "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": command})}}  # fmt: skip
        output = "\n".join(f"def part_{n}_{line}(): return {line}" for line in range(20))
        out += [
            {"role": "assistant", "content": f"Reading part {n}.", "tool_calls": [call]},
            {
                "role": "tool",
                "tool_call_id": f"c{n}",
                "content": json.dumps({"returncode": 0, "output": output}),
            },
        ]
    return out


def test_tool_calling_model_classes_send_bash_tool_and_text_ones_none():
    assert sent_tools(LitellmModel(model_name="openai/fake")) == [BASH_TOOL]
    from minisweagent.models.litellm_textbased_model import LitellmTextbasedModel

    assert sent_tools(LitellmTextbasedModel(model_name="openai/fake")) == []


def test_mini_swe_agent_messages_get_the_budget_less_the_tools():
    tools = tool_tokens([BASH_TOOL])
    root = count_message(SYSTEM) + count_message(TASK)
    budget = root + tools + 400  # the tools take a sizeable share of what the root leaves
    model = WeavingModel(model=LitellmModel(model_name="openai/fake"), contextweaver={"budget": budget})
    assert model.feed.reserved == tools > 40
    sent = model.weave([SYSTEM, TASK, *turns(12)])
    assert sum(count_message(m) for m in sent) + tools <= budget
    assert sum(count_message(m) for m in sent) > budget - tools - 200  # the rest of the budget is used
    assert model.stats()["tool_tokens"] == tools
    plain = WeavingModel(model=LitellmModel(model_name="openai/fake"), contextweaver={"budget": budget})
    plain.feed.reserved = 0
    assert sum(count_message(m) for m in plain.weave([SYSTEM, TASK, *turns(12)])) + tools > budget  # without


@pytest.mark.slow
def test_langchain_bound_tools_count_against_the_budget(tmp_path: Path):
    pytest.importorskip("langchain.agents")
    from langchain.agents import create_agent
    from langchain_core.utils.function_calling import convert_to_openai_tool

    from contextweaver.integrations.langgraph import ContextWeaverMiddleware
    from tests.integrations.test_langgraph import TURNS, scripted_model, shell_tool
    from tests.integrations.toyrepo import TASK as TOY_TASK
    from tests.integrations.toyrepo import make_repo

    repo = make_repo(tmp_path / "repo")
    shell = shell_tool(repo)
    tools = tool_tokens([convert_to_openai_tool(shell)])
    budget = 700 + tools
    model = scripted_model()
    middleware = ContextWeaverMiddleware(budget=budget)
    agent = create_agent(model, [shell], system_prompt="You fix bugs.", middleware=[middleware])
    agent.invoke({"messages": [{"role": "user", "content": TOY_TASK}]})
    assert len(model.sent) == len(TURNS) + 1
    from langchain_core.messages import convert_to_openai_messages

    for sent in model.sent:
        assert sum(count_message(m) for m in convert_to_openai_messages(sent)) + tools <= budget + 8 * len(
            sent
        )
    assert middleware.last_context is not None and middleware.last_context.tokens <= budget - tools


def viewer_tool():
    """A tool with an editor-sized description (SWE-agent's str_replace_editor is ~600 tokens)."""
    from langchain_core.tools import StructuredTool

    rules = [
        f"Rule {n}: the view shows line numbers, and a range past the end of the file is cut."
        for n in range(20)
    ]
    return StructuredTool.from_function(
        lambda path: Path(path).read_text(), name="view", description="View a file.\n" + "\n".join(rules)
    )


@pytest.mark.slow
def test_langgraph_hook_counts_the_tools_it_is_given(tmp_path: Path):
    pytest.importorskip("langgraph.prebuilt")
    from langchain_core.messages import convert_to_openai_messages
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from langgraph.prebuilt import ToolNode, create_react_agent

    from contextweaver.integrations.langgraph import ContextWeaverHook
    from tests.integrations.test_langgraph import TURNS, scripted_model, shell_tool
    from tests.integrations.toyrepo import TASK as TOY_TASK
    from tests.integrations.toyrepo import make_repo

    node = ToolNode([shell_tool(make_repo(tmp_path / "repo")), viewer_tool()])
    tools = tool_tokens([convert_to_openai_tool(t) for t in node.tools_by_name.values()])
    budget = 500 + tools  # the tools take almost half
    model = scripted_model()
    hook = ContextWeaverHook(budget=budget, tools=node)  # the ToolNode the agent is given
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent is deprecated in favour of create_agent
        agent = create_react_agent(model, node, pre_model_hook=hook)
    agent.invoke({"messages": [{"role": "user", "content": TOY_TASK}]})
    assert len(model.sent) == len(TURNS) + 1
    assert tool_tokens([convert_to_openai_tool(t) for t in model.bound]) == tools  # what the model is sent
    for sent in model.sent:
        messages = convert_to_openai_messages(sent)
        assert sum(count_message(m) for m in messages) + tools <= budget + 8 * len(sent)
    context = hook.last_context
    assert context is not None and budget - tools - 150 < context.tokens <= budget - tools  # the rest used
    assert context.full_history_tokens + tools > budget  # it had to cut


def test_a_hook_with_a_budget_and_no_tools_says_they_are_not_counted(caplog: pytest.LogCaptureFixture):
    pytest.importorskip("langgraph.prebuilt")
    from contextweaver.integrations.langgraph import ContextWeaverHook

    ContextWeaverHook(budget=5000, tools=[])
    ContextWeaverHook()  # without a budget nothing is cut: the tools do not matter
    assert not any("not counted" in w for w in warnings_of(caplog))
    ContextWeaverHook(budget=5000)
    (said,) = [w for w in warnings_of(caplog) if "not counted" in w]
    assert said.startswith("ContextWeaver (LangGraph pre_model_hook)") and "tools=tools" in said
