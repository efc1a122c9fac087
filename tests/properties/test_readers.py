"""Each trajectory reader on generated input: a valid run of any length and text is read without a crash
and without losing a step (each output where it was); garbage raises TrajectoryError, never anything else."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contextweaver.formats import FORMATS, TrajectoryError, load_trajectories, load_trajectory
from contextweaver.formats.base import Trajectory
from contextweaver.formats.jsonl import dump_steps
from contextweaver.records import Step
from tests.properties import sized

pytestmark = pytest.mark.property

SYSTEM = {"role": "system", "content": "You are a coding agent."}
TASK = {"role": "user", "content": "Fix the parser."}
text = st.text(st.characters(exclude_categories=("Cs",)), max_size=60)
"""Any text but lone surrogates (JSON files hold UTF-8)."""
command = st.text(
    st.characters(exclude_categories=("Cs", "Cc"), exclude_characters="`"), min_size=1, max_size=30
).filter(lambda c: c.strip() == c and c != "")
Turn = tuple[str, str, str]
"""(thought, command, output) of one step."""
turns = st.lists(st.tuples(text, command, text), min_size=1, max_size=8)


def mini_swe_agent(run: list[Turn]) -> Any:
    messages: list[dict[str, Any]] = [SYSTEM, TASK]
    for thought, action, output in run:
        messages.append({"role": "assistant", "content": f"THOUGHT: {thought}\n\n```bash\n{action}\n```"})
        messages.append(
            {"role": "user", "content": f"<returncode>0</returncode>\n<output>\n{output}</output>"}
        )
    return {"trajectory_format": "mini-swe-agent-1", "instance_id": "g", "info": {}, "messages": messages}


def openai(run: list[Turn]) -> Any:
    messages: list[dict[str, Any]] = [SYSTEM, TASK]
    for n, (thought, action, output) in enumerate(run):
        call = {
            "id": f"c{n}",
            "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": action})},
        }
        messages += [
            {"role": "assistant", "content": thought, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{n}", "content": output},
        ]
    return messages


def openhands_sdk(run: list[Turn]) -> Any:
    events: list[dict[str, Any]] = [
        {
            "kind": "SystemPromptEvent",
            "source": "agent",
            "system_prompt": {"type": "text", "text": SYSTEM["content"]},
        },
        {
            "kind": "MessageEvent",
            "source": "user",
            "llm_message": {"role": "user", "content": [{"type": "text", "text": TASK["content"]}]},
        },
    ]
    for n, (thought, action, output) in enumerate(run):
        arguments = {"command": action}
        events.append({
            "kind": "ActionEvent", "id": f"e{n}", "source": "agent", "llm_response_id": f"r{n}",
            "thought": [{"type": "text", "text": thought}] if thought else [],
            "action": {"kind": "ExecuteBashAction", **arguments}, "tool_name": "execute_bash", "tool_call_id": f"c{n}",
            "tool_call": {"id": f"c{n}", "name": "execute_bash", "arguments": json.dumps(arguments)},
        })  # fmt: skip
        events.append({"kind": "ObservationEvent", "source": "environment", "tool_call_id": f"c{n}",
                       "observation": {"kind": "ExecuteBashObservation", "output": output}})  # fmt: skip
    return events


def swe_agent(run: list[Turn]) -> Any:
    entries = [
        {"thought": t, "action": a + "\n", "observation": o, "response": t + a, "state": {}}
        for t, a, o in run
    ]
    history: list[dict[str, Any]] = [{**SYSTEM, "agent": "primary"}, {**TASK, "agent": "primary"}]
    for thought, action, output in run:
        history.append({"role": "assistant", "content": f"{thought}\n```\n{action}\n```", "thought": thought,
                        "action": action, "agent": "primary"})  # fmt: skip
        history.append({"role": "user", "content": f"{output}\n(Open file: n/a)\nbash-$", "agent": "primary"})
    return {"environment": "swe_main", "trajectory": entries, "history": history, "info": {}}


def nebius(run: list[Turn]) -> Any:
    trajectory = [
        {"role": "system", "system_prompt": SYSTEM["content"], "text": "None"},
        {"role": "user", "text": TASK["content"]},
    ]
    for thought, action, output in run:
        trajectory += [
            {"role": "ai", "text": f"{thought}\n\n```\n{action}\n```"},
            {"role": "user", "text": output},
        ]
    return {"instance_id": "g", "model_name": "m", "target": True, "trajectory": trajectory}


def openhands_v0(run: list[Turn]) -> Any:
    events: list[dict[str, Any]] = [
        {"id": 0, "source": "user", "action": "message", "args": {"content": TASK["content"]}}
    ]
    for n, (thought, action, output) in enumerate(run):
        arguments = json.dumps({"command": action})
        call = {
            "id": f"c{n}",
            "type": "function",
            "function": {"name": "execute_bash", "arguments": arguments},
        }
        response = {
            "id": f"r{n}",
            "choices": [{"message": {"role": "assistant", "content": thought, "tool_calls": [call]}}],
        }
        metadata = {"function_name": "execute_bash", "tool_call_id": f"c{n}", "model_response": response}
        events.append({"id": 2 * n + 1, "source": "agent", "action": "run", "args": {"command": action, "thought": thought},
                       "tool_call_metadata": metadata})  # fmt: skip
        events.append({"id": 2 * n + 2, "source": "agent", "observation": "run", "cause": 2 * n + 1, "content": output,
                       "extras": {}})  # fmt: skip
    return events


WRITERS: dict[str, tuple[str, Callable[[list[Turn]], Any]]] = {
    "mini-swe-agent": ("run.traj.json", mini_swe_agent),
    "openai": ("chat.json", openai),
    "openhands-sdk": ("events.json", openhands_sdk),
    "swe-agent": ("run.traj", swe_agent),
    "nebius": ("run.json", nebius),
    "openhands-v0": ("events.json", openhands_v0),
}


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_a_valid_run_is_read_whole(name: str, tmp_path: Path) -> None:
    filename, writer = WRITERS[name]

    @sized(30)
    @given(run=turns)
    def prop(run: list[Turn]) -> None:
        path = tmp_path / filename
        path.write_text(json.dumps(writer(run)), encoding="utf-8")
        trajectory = load_trajectory(path, format=name)
        agent = [s for s in trajectory.steps if s.kind == "agent"]
        assert len(agent) == len(run), [s.action for s in agent]
        for step, (_, _, output) in zip(agent, run, strict=True):
            assert output.strip() in step.observation

    prop()


@sized(30)
@given(run=turns)
def test_the_jsonl_format_round_trips_any_run(
    run: list[Turn], tmp_path_factory: pytest.TempPathFactory
) -> None:
    original = Trajectory(root=[SYSTEM, TASK], steps=[Step(t, a, o) for t, a, o in run])
    path = tmp_path_factory.mktemp("jsonl") / "run.jsonl"
    dump_steps(path, original)
    assert load_trajectory(path).steps == original.steps


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "role",
                    "content",
                    "messages",
                    "trajectory",
                    "history",
                    "kind",
                    "type",
                    "id",
                    "tool_calls",
                    "text",
                    "action",
                    "observation",
                    "thought",
                    "source",
                    "payload",
                    "message",
                    "events",
                    "instance_id",
                ]
            )
            | text,
            inner,
            max_size=5,
        )
    ),
    max_leaves=20,
)
records = st.fixed_dictionaries(
    {"type": st.sampled_from(["session_meta", "response_item", "message", "user", "assistant", "root"]) | json_values},
    optional={"payload": json_values, "message": json_values, "uuid": text, "parentUuid": text | st.none()},
)  # fmt: skip
"""JSON Lines records shaped like the session formats' (Claude Code, Codex, ContextWeaver's), fields generated."""
garbage = st.one_of(
    st.binary(max_size=200),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.lists(json_values | records, max_size=4).map(lambda vs: "\n".join(json.dumps(v) for v in vs).encode()),
)


@pytest.mark.parametrize("name", [None, *FORMATS.names()])
def test_garbage_raises_a_trajectory_error_or_reads(name: str | None, tmp_path: Path) -> None:
    """Detected or forced, a reader given garbage raises TrajectoryError (naming the file), or reads it."""

    @sized(60)
    @given(content=garbage)
    def prop(content: bytes) -> None:
        path = tmp_path / "input.json"
        path.write_bytes(content)
        with contextlib.suppress(TrajectoryError):
            load_trajectories(path, format=name)

    prop()
