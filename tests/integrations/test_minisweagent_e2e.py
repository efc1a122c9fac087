"""mini-swe-agent end to end: its deterministic model and local environment fix a toy repository
through ContextWeaverAgent; the woven context before each query, the labels and the saved graph are checked."""

from __future__ import annotations

import copy
import json

import pytest

from tests.integrations.toyrepo import FIX_TURNS, TASK, make_repo, text_output

pytest.importorskip("minisweagent")

from minisweagent.environments.local import LocalEnvironment  # noqa: E402
from minisweagent.models.test_models import DeterministicModel  # noqa: E402

from contextweaver.formats import load_trajectory  # noqa: E402
from contextweaver.integrations.contexts import read_contexts  # noqa: E402
from contextweaver.integrations.minisweagent import ContextWeaverAgent  # noqa: E402

AGENT = {
    "system_template": "You fix bugs with shell commands.",
    "instance_template": "{{task}}",
    "step_limit": 20,
}


class RecordingModel(DeterministicModel):
    """mini-swe-agent's deterministic model, keeping a copy of every message list it was sent."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.sent: list[list[dict]] = []

    def query(self, messages, **kwargs):
        self.sent.append(copy.deepcopy(messages))
        return super().query(messages, **kwargs)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory):
    tmp_path = tmp_path_factory.mktemp("minisweagent")
    repo = make_repo(tmp_path / "repo")
    model = RecordingModel(outputs=[text_output(t, c) for t, c in FIX_TURNS])
    traj = tmp_path / "out" / "toy.traj.json"
    agent = ContextWeaverAgent(
        model,
        LocalEnvironment(cwd=str(repo)),
        output_path=traj,
        contextweaver={"strategy": "cw-paper", "window": 2, "weaver": {"max_parents": 2}},
        **AGENT,
    )
    info = agent.run(TASK)
    return agent, model, traj, info, repo


@pytest.mark.slow
def test_the_agent_fixes_the_repository(run):
    agent, _, _, info, repo = run
    assert info["exit_status"] == "Submitted"
    assert "+    return a + b" in info["submission"]
    assert "return a + b" in (repo / "calc.py").read_text()


def test_the_trajectory_keeps_the_full_unwoven_history(run):
    agent, _, traj, _, _ = run
    saved = json.loads(traj.read_text())["messages"]
    assert saved == json.loads(json.dumps(agent.messages))
    observations = [m["content"] for m in saved if m["role"] == "user"][1:]
    assert not any("Old environment output" in text for text in observations)
    assert any("1 failed, 1 passed" in text for text in observations)


def test_the_model_receives_the_woven_context_before_each_query(run):
    agent, model, traj, _, _ = run
    _, contexts_path = (traj.with_name("toy.contextweaver.json"), traj.with_name("toy.contexts.jsonl"))
    saved = json.loads(traj.read_text())["messages"]
    records = list(read_contexts(contexts_path, saved))  # rebuilt from references and cuts
    assert len(records) == len(model.sent) == len(FIX_TURNS)
    for number, (record, sent) in enumerate(zip(records, model.sent, strict=True)):
        assert record["query"] == number + 1
        assert record["messages"] == sent  # exactly what the model was sent
        assert [d["index"] for d in record["decisions"]] == list(range(1, number + 1))  # steps so far
        assert sent[0]["content"] == "You fix bugs with shell commands." and sent[1]["content"] == TASK
    assert model.sent[0] == agent.messages[:2]  # nothing to weave before the first step

    last = records[-1]  # before the submit: steps 1..6 done, W=2
    modes = {d["index"]: d["mode"] for d in last["decisions"]}
    graph = agent.model.feed.strategy.graph
    assert {i for i, mode in modes.items() if mode == "full"} == {6, *graph.ancestry(6, 2)}
    assert modes[2] == "compressed"  # the failing run (superseded by step 5) is never an ancestor
    failing_output = next(m for m in model.sent[2] if "1 failed" in str(m.get("content")))
    assert failing_output["role"] == "user"
    assert not any("1 failed" in str(m.get("content")) for m in model.sent[-1])
    assert any(str(m.get("content")).startswith("Old environment output: (") for m in model.sent[-1])
    assert "test_add" in last["test_status"] and "PASSED" in last["test_status"]
    assert last["tokens"] < last["full_history_tokens"]


def test_labels_record_the_failure_then_its_supersession(run):
    agent, _, _, _, _ = run
    graph = agent.model.feed.strategy.graph
    assert [n.step.action for n in graph.nodes[1:]] == [c for _, c in FIX_TURNS[:-1]]
    assert graph.node(2).validation_status == "superseded" and graph.node(2).superseded_by == 5
    assert graph.node(5).validation_status == "passed"
    assert [(r.index, str(r.status), r.by) for r in graph.labels] == [(2, "superseded", 5)]
    assert agent.model.feed.rebuilds == 0  # one weaver for the whole run, fed incrementally


def test_the_graph_is_saved_beside_the_trajectory(run):
    agent, _, traj, _, _ = run
    document = json.loads(traj.with_name("toy.contextweaver.json").read_text())
    assert document["format"] == "contextweaver-graph-1" and document["strategy"] == "cw-paper"
    assert document["settings"]["weaver"]["window"] == 2
    # the configuration that ran, not WeaverConfig's defaults (selector adaptive, mode lazy)
    assert document["settings"]["weaver"]["selector"] == "ancestry"
    assert document["settings"]["weaver"]["mode"] == "per_step"
    nodes = {n["index"]: n for n in document["nodes"]}
    assert sorted(nodes) == [1, 2, 3, 4, 5, 6]
    assert nodes[2]["validation_status"] == "superseded" and nodes[2]["superseded_by"] == 5
    assert nodes[2]["test_results"] == {
        "test_calc.py::test_add": "failed",
        "test_calc.py::test_mul": "passed",
    }
    assert document["labels"] == [
        {"index": 2, "status": "superseded", "by": 5, "reason": document["labels"][0]["reason"]}
    ]
    for node in nodes.values():
        assert all(0 <= p["index"] < node["index"] and p["reason"] for p in node["parents"])
        assert len(node["parents"]) <= 2
    assert nodes[4]["parents"], "the edit depends on earlier steps"
    assert document["stats"]["memory"] == {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0}


def test_live_steps_match_a_replay_of_the_saved_trajectory(run):
    agent, _, traj, _, _ = run
    replayed = load_trajectory(traj)
    live = [n.step for n in agent.model.feed.strategy.graph.nodes[1:]]
    assert [(s.thought, s.action, s.observation) for s in live] == [
        (s.thought, s.action, s.observation) for s in replayed.steps[: len(live)]
    ]
