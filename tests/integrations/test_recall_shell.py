"""Recall through the shell, with the real mini-swe-agent: after a cut the model types the note's
`contextweaver recall N` and its next context holds the step's output byte for byte."""

from __future__ import annotations

import pytest

pytest.importorskip("minisweagent")  # before the helpers below, which import it too

from minisweagent.agents.default import DefaultAgent  # noqa: E402
from minisweagent.environments.local import LocalEnvironment  # noqa: E402

from contextweaver.integrations.minisweagent import ContextWeaverAgent, WeavingModel  # noqa: E402
from tests.integrations.test_minisweagent_e2e import AGENT, RecordingModel  # noqa: E402
from tests.integrations.toyrepo import FIX_TURNS, TASK, make_repo, text_output  # noqa: E402

SETTINGS = {"strategy": "cw-paper", "window": 2, "weaver": {"max_parents": 2}}
TURNS = [*FIX_TURNS[:6], ("Read the failing run again.", "contextweaver recall 2"), FIX_TURNS[6]]


def failing_run(agent_messages: list[dict]) -> str:
    return next(m["content"] for m in agent_messages if "1 failed" in str(m.get("content")))


def test_the_agent_class_answers_the_recall_command_from_memory(tmp_path) -> None:
    model = RecordingModel(outputs=[text_output(t, c) for t, c in TURNS])
    agent = ContextWeaverAgent(
        model, LocalEnvironment(cwd=str(make_repo(tmp_path / "repo"))), contextweaver=SETTINGS, **AGENT
    )
    info = agent.run(TASK)
    assert info["exit_status"] == "Submitted"
    before = model.sent[-2]  # the context the model read when it asked for step 2
    assert not any("1 failed" in str(m.get("content")) for m in before)
    assert any("lines omitted, #2)" in str(m.get("content")) for m in before)
    step2 = agent.model.feed.strategy.graph.node(2).step
    answer = model.sent[-1][-1]["content"]  # the recall's output, in the next context
    assert answer.startswith("[step 2: `") and step2.observation in answer
    assert "command not found" not in str(agent.messages[-2]["content"])  # never reached the shell


def test_a_fixed_agent_class_gets_the_answer_in_place_of_the_shells_reply(tmp_path) -> None:
    """`model_class: WeavingModel` (mini-extra swebench, SWE-agent alike): the shell runs the command
    and knows nothing of it; the woven context carries the answer instead."""
    inner = RecordingModel(outputs=[text_output(t, c) for t, c in TURNS])
    model = WeavingModel(model=inner, contextweaver=SETTINGS)
    env = LocalEnvironment(cwd=str(make_repo(tmp_path / "repo")), env={"PATH": "/usr/bin:/bin"})
    agent = DefaultAgent(model, env, **AGENT)
    agent.run(TASK)
    shell_said = str(agent.messages[-3]["content"])
    assert "not found" in shell_said  # the local shell has no contextweaver
    step2 = model.feed.strategy.graph.node(2).step
    answer = inner.sent[-1][-1]["content"]
    assert answer.startswith("[step 2: `") and step2.observation in answer


def test_langchain_middleware_offers_the_recall_tool_and_the_model_reads_the_step_back(tmp_path) -> None:
    pytest.importorskip("langchain.agents")
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage

    from contextweaver.integrations.langgraph import ContextWeaverMiddleware
    from tests.integrations.test_langgraph import ScriptedModel, shell_tool

    turns = [*FIX_TURNS[:6]]
    replies = [
        AIMessage(
            content=t,
            tool_calls=[{"name": "shell", "args": {"command": c}, "id": f"call_{n}", "type": "tool_call"}],
        )
        for n, (t, c) in enumerate(turns, start=1)
    ]
    recall = {
        "name": "contextweaver_recall",
        "args": {"steps": "2"},
        "id": "call_recall",
        "type": "tool_call",
    }
    replies += [
        AIMessage(content="Read the failing run again.", tool_calls=[recall]),
        AIMessage(content="Done."),
    ]
    model = ScriptedModel(messages=iter(replies), sent=[])
    middleware = ContextWeaverMiddleware(strategy="cw-ancestry", window=2, budget=1200)
    agent = create_agent(
        model,
        [shell_tool(make_repo(tmp_path / "repo"))],
        system_prompt="You fix bugs.",
        middleware=[middleware],
    )
    result = agent.invoke({"messages": [{"role": "user", "content": TASK}]})
    assert "contextweaver_recall" in [getattr(t, "name", None) for t in model.bound]
    before = model.sent[-2]  # what the model read when it called the tool
    note = next(str(m.content) for m in before if "ContextWeaver working state" in str(m.content))
    assert "`contextweaver_recall` tool" in note
    assert any("lines omitted, #2)" in str(m.content) for m in before if m.type == "tool")
    step2 = next(m for m in result["messages"] if m.type == "tool" and m.tool_call_id == "call_2")
    answer = next(
        str(m.content) for m in model.sent[-1] if m.type == "tool" and m.tool_call_id == "call_recall"
    )
    assert answer.startswith("[step 2: `") and str(step2.content) in answer
    graph = middleware.weaver.conversation(result["messages"]).feed.strategy.graph
    assert not graph.node(7).test_results  # the old run it repeats is not a new one


@pytest.mark.parametrize("tool_calls", [False, True])
def test_swe_agents_processor_puts_the_answer_where_the_container_said_command_not_found(
    tmp_path, tool_calls
) -> None:
    """SWE-agent runs the command in its container, which knows nothing of it; the woven history carries
    the answer in place of the container's reply (the trajectory keeps what the container said)."""
    from contextweaver.integrations.sweagent import ContextWeaverHistoryProcessor
    from tests.integrations.test_sweagent_processor import action_item, observation_item, run_with

    processor = ContextWeaverHistoryProcessor(strategy="cw-ancestry", window=2, weaver={"max_parents": 2})
    history, _, _ = run_with(processor, make_repo(tmp_path / "repo"), tool_calls=tool_calls)
    call_id = "call_recall" if tool_calls else None
    history.append(action_item("Read the failing run again.", "contextweaver recall 2", tool_call_id=call_id))
    history.append(observation_item("bash: contextweaver: command not found", tool_call_id=call_id))
    woven = processor(list(history))
    step2 = processor.feed_for(history).strategy.graph.node(2).step
    assert woven[-1]["content"].startswith("[step 2: `") and step2.observation in woven[-1]["content"]
    assert set(history[-1]) <= set(woven[-1])  # the item keeps its fields
    assert history[-1]["content"] == "bash: contextweaver: command not found"
