"""The SWE-agent-style history processor on a SWE-agent-shaped history of a real run on a toy repository."""

from __future__ import annotations

import copy
import json
import re
import subprocess
from pathlib import Path

import pytest

from contextweaver.integrations.sweagent import (
    ContextWeaverHistoryProcessor,
    apply_processors,
    history_processors,
)
from tests.integrations.toyrepo import FIX_TURNS, TASK, make_repo

PLACEHOLDER_START = "Old environment output: ("


def item(role: str, content: str, message_type: str, **extra) -> dict:
    return {"role": role, "content": content, "agent": "main", "message_type": message_type, **extra}


def root_items(task: str = TASK) -> list[dict]:
    return [
        item("system", "You are a software engineer in a shell.", "system"),
        item("user", "Demonstration: ls shows the files.", "demonstration", is_demo=True),
        item("user", task, "observation"),
    ]


def shell(repo: Path, command: str) -> str:
    done = subprocess.run(command, shell=True, cwd=repo, capture_output=True, text=True, timeout=120)
    return done.stdout + done.stderr


def action_item(thought: str, command: str, *, tool_call_id: str | None = None) -> dict:
    if tool_call_id is None:
        content = f"{thought}\n\n```\n{command}\n```"
        return item("assistant", content, "action", thought=thought, action=command, tool_calls=None)
    call = {
        "id": tool_call_id,
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": command})},
    }
    return item("assistant", thought, "action", thought=thought, action=command, tool_calls=[call])


def observation_item(output: str, *, tool_call_id: str | None = None) -> dict:
    if tool_call_id is None:
        return item("user", output, "observation")
    return item("tool", output, "observation", tool_call_ids=[tool_call_id])


def run_with(processor, repo: Path, *, tool_calls: bool = False):
    """SWE-agent's loop: before each query the processor sees a fresh list of the same history items."""
    history = root_items()
    outputs, node_ids = [], []
    for number, (thought, command) in enumerate(FIX_TURNS[:-1], start=1):
        call_id = f"call_{number}" if tool_calls else None
        history.append(action_item(thought, command, tool_call_id=call_id))
        history.append(observation_item(shell(repo, command), tool_call_id=call_id))
        before = copy.deepcopy(history)
        outputs.append(processor(list(history)))
        assert history == before, "the processor must not modify the history"
        strategy = processor.feed_for(history).strategy
        node_ids.append([id(n) for n in getattr(strategy, "graph", strategy).nodes])
    return history, outputs, node_ids


@pytest.fixture(scope="module")
def woven(tmp_path_factory: pytest.TempPathFactory):
    processor = ContextWeaverHistoryProcessor(strategy="cw-paper", window=2, weaver={"max_parents": 2})
    history, outputs, node_ids = run_with(processor, make_repo(tmp_path_factory.mktemp("swe") / "repo"))
    return processor, history, outputs, node_ids


@pytest.mark.slow
def test_items_keep_their_shape_and_observations_get_the_placeholder(woven):
    processor, history, outputs, _ = woven
    last = outputs[-1]
    assert last[:3] == history[:3]  # system, demonstration and task, verbatim
    status = last[3]
    assert status["content"].startswith("TEST STATUS:") and "keep_output" in status["tags"]
    assert status["agent"] == "main" and status["message_type"] == "observation"
    body = last[4:]
    assert [i["message_type"] for i in body] == [i["message_type"] for i in history[3:]]
    for out, original in zip(body, history[3:], strict=True):
        assert set(out) == set(original)
        if out["content"] != original["content"]:
            assert original["message_type"] == "observation"
            lines = len(original["content"].splitlines())
            assert re.fullmatch(rf"Old environment output: \({lines} lines omitted, #\d+\)", out["content"])
    context = processor.last_context
    kept = {d.index for d in context.decisions if d.mode == "full"}
    graph = processor.feed_for(history).strategy.graph
    assert kept == {6, *graph.ancestry(6, 2)}
    failing = history[3 + 2 * 1 + 1]  # observation of step 2, the failing run
    assert "1 failed" in failing["content"]
    assert not any("1 failed" in i["content"] for i in body)


def test_labels_failed_then_superseded_by_the_passing_run(woven):
    processor, history, outputs, _ = woven
    graph = processor.feed_for(history).strategy.graph
    assert graph.node(2).validation_status == "superseded" and graph.node(2).superseded_by == 5
    assert graph.node(5).validation_status == "passed"
    statuses = [
        next((i["content"] for i in out if "contextweaver_status" in i.get("tags", ())), "")
        for out in outputs
    ]
    assert "FAILED" in statuses[1] and "test_add" in statuses[1]
    assert "✓ test_calc.py::test_add: PASSED" in statuses[4]


def test_only_new_items_are_added_between_queries(woven):
    processor, history, _, node_ids = woven
    for earlier, later in zip(node_ids, node_ids[1:], strict=False):
        assert later[: len(earlier)] == earlier and len(later) == len(earlier) + 1
    assert processor.feed_for(history).rebuilds == 0


def test_a_changed_prefix_rebuilds_and_other_conversations_keep_their_state(woven):
    processor, history, _, _ = woven
    feed = processor.feed_for(history)
    nodes_before = len(feed.strategy.graph)
    other = [*root_items("another task"), action_item("look", "ls"), observation_item("calc.py")]
    processor(other)
    assert processor.feed_for(other) is not feed and len(processor.feed_for(other).strategy.graph) == 2
    rewritten = copy.deepcopy(history)
    rewritten[4]["content"] = "the first observation, rewritten"  # observation of step 1
    out = processor(rewritten)
    assert feed.rebuilds == 1 and len(feed.strategy.graph) == nodes_before
    assert any(i["content"] == "the first observation, rewritten" for i in out) or any(
        i["content"].startswith(PLACEHOLDER_START) for i in out
    )


@pytest.mark.slow
def test_tool_call_items_stay_paired_with_their_results(tmp_path: Path):
    processor = ContextWeaverHistoryProcessor(strategy="cw-perstep", window=2)
    history, outputs, _ = run_with(processor, make_repo(tmp_path / "repo"), tool_calls=True)
    last = outputs[-1]
    calls = [c["id"] for i in last if i["role"] == "assistant" for c in i.get("tool_calls") or ()]
    results = [i["tool_call_ids"][0] for i in last if i["role"] == "tool"]
    assert calls == results == [f"call_{n}" for n in range(1, 7)]
    assert any(i["role"] == "tool" and i["content"].startswith(PLACEHOLDER_START) for i in last)
    graph = processor.feed_for(history).strategy.graph
    assert graph.node(2).superseded_by == 5


@pytest.mark.slow
def test_selected_by_type_like_swe_agents_own_processors(tmp_path: Path):
    processors = history_processors([{"type": "contextweaver", "strategy": "sliding_window", "window": 2}])
    history, _, _ = run_with(processors[0], make_repo(tmp_path / "repo"))
    out = apply_processors(processors, list(history))
    elided = [i for i in out if i["content"].startswith(PLACEHOLDER_START)]
    assert len(elided) == 4  # six observations, the last two kept: SWE-agent's last_n_observations(n=2)
    assert out[2]["content"] == TASK  # the task is never elided
    with pytest.raises(ValueError, match="unknown strategy"):
        history_processors([{"type": "contextweaver", "strategy": "nope"}])


def test_swe_agents_own_types_need_swe_agent():
    """SWE-agent is not a dependency: without it, its processor types fail with the fix in the message."""
    try:
        import sweagent  # noqa: F401
    except ImportError:
        with pytest.raises(ValueError, match="install SWE-agent"):
            history_processors([{"type": "last_n_observations", "n": 5}])
    else:
        assert callable(history_processors([{"type": "last_n_observations", "n": 5}])[0])
