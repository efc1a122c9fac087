"""The one-line configurations: agent_class or model_class from mini-swe-agent's YAML, and tool calling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integrations.toyrepo import FIX_TURNS, TASK, make_repo, text_output

pytest.importorskip("minisweagent")

from minisweagent.agents import get_agent  # noqa: E402
from minisweagent.agents.default import DefaultAgent  # noqa: E402
from minisweagent.environments.local import LocalEnvironment  # noqa: E402
from minisweagent.models import get_model  # noqa: E402
from minisweagent.models.test_models import DeterministicToolcallModel, make_toolcall_output  # noqa: E402

from contextweaver.integrations.minisweagent import ContextWeaverAgent, WeavingModel  # noqa: E402

TEMPLATES = {
    "system_template": "You fix bugs.",
    "instance_template": "{{task}}",
    "step_limit": 20,
    "cost_limit": 0,
}
CW_AGENT = "contextweaver.integrations.minisweagent.ContextWeaverAgent"
CW_MODEL = "contextweaver.integrations.minisweagent.WeavingModel"


@pytest.mark.slow
def test_agent_class_line_in_the_yaml_selects_the_weaving_agent(tmp_path: Path):
    model = get_model(
        config={
            "model_class": "deterministic",
            "model_name": "deterministic",
            "outputs": [text_output(t, c) for t, c in FIX_TURNS],
        }
    )
    config = {"agent_class": CW_AGENT, "contextweaver": {"window": 3, "analyzer": "heuristic"}, **TEMPLATES}
    agent = get_agent(model, LocalEnvironment(cwd=str(make_repo(tmp_path / "repo"))), config)
    assert isinstance(agent, ContextWeaverAgent) and agent.config.contextweaver.window == 3
    assert agent.run(TASK)["exit_status"] == "Submitted"
    assert agent.model.feed.strategy.config.window == 3
    with pytest.raises(ValueError, match="unknown strategy"):
        get_agent(model, LocalEnvironment(), {**config, "contextweaver": {"strategy": "nope"}})


@pytest.mark.slow
def test_model_class_line_weaves_for_an_agent_it_does_not_know(tmp_path: Path):
    """For runners whose agent class is fixed (mini-extra swebench): wrap the model instead."""
    model = get_model(
        config={
            "model_class": CW_MODEL,
            "wrapped_model_class": "deterministic",
            "model_name": "deterministic",
            "outputs": [text_output(t, c) for t, c in FIX_TURNS],
            "contextweaver": {"strategy": "sliding_window", "window": 2},
        }
    )
    assert isinstance(model, WeavingModel)
    traj = tmp_path / "plain.traj.json"
    agent = DefaultAgent(
        model, LocalEnvironment(cwd=str(make_repo(tmp_path / "repo"))), output_path=traj, **TEMPLATES
    )
    agent.run(TASK)
    saved = json.loads(traj.read_text())
    assert not any("Old environment output" in str(m.get("content")) for m in saved["messages"])
    summary = saved["info"]["contextweaver"]
    assert summary["queries"] == len(FIX_TURNS) and summary["settings"]["strategy"] == "sliding_window"
    assert summary["context_tokens"][-1] < summary["full_history_tokens"][-1]
    assert model.last_context is not None and len(model.last_context.compressed) == len(FIX_TURNS) - 1 - 2


@pytest.mark.slow
def test_tool_calling_turns_keep_calls_and_results_together(tmp_path: Path):
    outputs = []
    for number, (thought, command) in enumerate(FIX_TURNS, start=1):
        call = {
            "id": f"call_{number}",
            "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": command})},
        }
        outputs.append(
            make_toolcall_output(thought, [call], [{"command": command, "tool_call_id": f"call_{number}"}])
        )
    traj = tmp_path / "tools.traj.json"
    agent = ContextWeaverAgent(
        DeterministicToolcallModel(outputs=outputs),
        LocalEnvironment(cwd=str(make_repo(tmp_path / "repo"))),
        output_path=traj,
        contextweaver={"strategy": "cw-perstep", "window": 2},
        **TEMPLATES,
    )
    assert agent.run(TASK)["exit_status"] == "Submitted"
    sent = agent.model.last_context.messages
    calls = [c["id"] for m in sent if m["role"] == "assistant" for c in m["tool_calls"]]
    results = [m["tool_call_id"] for m in sent if m["role"] == "tool"]
    assert calls == results == [f"call_{n}" for n in range(1, len(FIX_TURNS))]
    assert any(m["role"] == "tool" and m["content"].startswith("Old environment output") for m in sent)
    graph = agent.model.feed.strategy.graph
    assert [n.step.action for n in graph.nodes[1:]] == [c for _, c in FIX_TURNS[:-1]]
    assert graph.node(2).superseded_by == 5
