"""mini-swe-agent 2 as users run it by default: its own `mini.yaml` (tool calling, JSON observations,
`mode: confirm`), ContextWeaverAgent selected by one line, a scripted tool-calling model, the local
environment on a toy repository. Also: Responses-API model classes are refused at start, and the
contexts sidecar stays small and rebuilds exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tests.integrations.toyrepo import FIX_TURNS, TASK, make_repo

pytest.importorskip("minisweagent")

from minisweagent.agents import get_agent  # noqa: E402
from minisweagent.agents.interactive import InteractiveAgent  # noqa: E402
from minisweagent.config import builtin_config_dir  # noqa: E402
from minisweagent.environments.local import LocalEnvironment  # noqa: E402
from minisweagent.models.test_models import (  # noqa: E402
    DeterministicResponseAPIToolcallModel,
    DeterministicToolcallModel,
    make_toolcall_output,
)

from contextweaver.cli import main as cli  # noqa: E402
from contextweaver.formats import load_trajectory  # noqa: E402
from contextweaver.integrations.contexts import read_contexts  # noqa: E402
from contextweaver.integrations.minisweagent import ContextWeaverAgent, WeavingModel  # noqa: E402

CW_AGENT = "contextweaver.integrations.minisweagent.ContextWeaverAgent"
MINI = yaml.safe_load((builtin_config_dir / "mini.yaml").read_text())


def tool_turn(number: int, thought: str, command: str) -> dict:
    call = {
        "id": f"call_{number}",
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": command})},
    }
    return make_toolcall_output(thought, [call], [{"command": command, "tool_call_id": f"call_{number}"}])


def mini_model(turns: list[tuple[str, str]]) -> DeterministicToolcallModel:
    """The scripted model, rendering observations with mini.yaml's own (JSON) template."""
    outputs = [tool_turn(n, t, c) for n, (t, c) in enumerate(turns, start=1)]
    return DeterministicToolcallModel(
        outputs=outputs, observation_template=MINI["model"]["observation_template"]
    )


def agent_config(**agent: object) -> dict:
    return {**MINI["agent"], "step_limit": 20, "cost_limit": 0, "agent_class": CW_AGENT, **agent}


@pytest.mark.slow
def test_mini_yaml_tool_calling_observations_are_parsed_for_tests(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    traj = tmp_path / "run.traj.json"
    config = agent_config(
        mode="yolo",
        confirm_exit=False,
        output_path=traj,
        contextweaver={"strategy": "cw-perstep", "window": 2},
    )
    agent = get_agent(mini_model(FIX_TURNS), LocalEnvironment(cwd=str(repo)), config)
    assert isinstance(agent, ContextWeaverAgent) and isinstance(agent, InteractiveAgent)
    assert agent.run(TASK)["exit_status"] == "Submitted"
    saved = json.loads(traj.read_text())["messages"]
    assert any(m["role"] == "tool" and m["content"].lstrip().startswith("{") for m in saved)  # JSON, as sent
    graph = agent.model.feed.strategy.graph
    assert graph.node(2).test_results == {
        "test_calc.py::test_add": "failed",
        "test_calc.py::test_mul": "passed",
    }
    assert graph.node(2).superseded_by == 5 and graph.node(5).validation_status == "passed"
    assert "test_add: PASSED" in agent.model.last_context.test_status
    live = [(n.step.action, n.step.observation) for n in graph.nodes[1:]]
    assert live == [(s.action, s.observation) for s in load_trajectory(traj).steps[: len(live)]]

    contexts = traj.with_name("run.contexts.jsonl")
    assert contexts.stat().st_size <= 2 * traj.stat().st_size
    rebuilt = list(read_contexts(contexts, saved))
    assert rebuilt[-1]["messages"] == agent.model.last_context.messages
    shown = CliRunner().invoke(cli, ["contexts", str(traj), "--query", str(len(rebuilt))])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output) == agent.model.last_context.messages
    summary = CliRunner().invoke(cli, ["contexts", str(traj)])
    assert summary.exit_code == 0 and summary.output.count("query ") == len(rebuilt)


def test_mode_confirm_asks_before_every_command_and_a_rejection_is_honoured(tmp_path: Path, monkeypatch):
    from prompt_toolkit import PromptSession
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    repo = make_repo(tmp_path / "repo")
    turns = [("Create a marker.", "touch marker"), ("Submit.", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")]
    with create_pipe_input() as keys:
        keys.send_text("not that\n\n\n")  # reject the first command, confirm the submit, then quit
        monkeypatch.setattr(
            "minisweagent.agents.interactive.prompt_session", PromptSession(input=keys, output=DummyOutput())
        )
        agent = get_agent(mini_model(turns), LocalEnvironment(cwd=str(repo)), agent_config())  # mode: confirm
        assert agent.config.mode == "confirm"
        assert agent.run(TASK)["exit_status"] == "Submitted"
    assert not (repo / "marker").exists(), "a rejected command must not run"
    sent = agent.model.last_context.messages
    assert any(
        "rejected your commands" in str(m.get("content")) and "not that" in str(m.get("content"))
        for m in sent
    )


def test_interactive_settings_on_a_non_interactive_agent_name_the_fix():
    config = agent_config(wrapped_agent_class="default")
    with pytest.raises(ValueError, match="agent.mode is a setting of the interactive agent"):
        get_agent(mini_model([]), LocalEnvironment(), config)


def test_responses_api_model_classes_are_refused_at_start(tmp_path: Path):
    with pytest.raises(ValueError, match="Responses API"):
        WeavingModel(model=DeterministicResponseAPIToolcallModel(outputs=[]))
    with pytest.raises(ValueError, match="Responses API"):
        ContextWeaverAgent(
            DeterministicResponseAPIToolcallModel(outputs=[]), LocalEnvironment(), **agent_config(mode="yolo")
        )
    saved = tmp_path / "responses.traj.json"
    items = [
        {"type": "message", "role": "system", "content": [{"type": "input_text", "text": "s"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": TASK}]},
        {
            "object": "response",
            "output": [{"type": "function_call", "call_id": "c1", "name": "bash", "arguments": "{}"}],
        },
        {"type": "function_call_output", "call_id": "c1", "output": "ok"},
    ]
    saved.write_text(json.dumps({"trajectory_format": "mini-swe-agent-1.1", "messages": items}))
    with pytest.raises(ValueError, match=r"messages\[2\] is one of the OpenAI Responses API items"):
        load_trajectory(saved)
