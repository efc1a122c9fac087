from __future__ import annotations

import json

import pytest

from contextweaver.formats import TrajectoryError, detect_format, load_trajectories, load_trajectory


def act(event_id: str, response_id: str, call_id: str, name: str, arguments: dict, thought: str = "") -> dict:
    return {
        "kind": "ActionEvent", "id": event_id, "source": "agent", "llm_response_id": response_id,
        "thought": [{"type": "text", "text": thought}] if thought else [],
        "action": {"kind": "ExecuteBashAction", **arguments}, "tool_name": name, "tool_call_id": call_id,
        "tool_call": {"id": call_id, "name": name, "arguments": json.dumps(arguments)},
    }  # fmt: skip


def obs(call_id: str, output: str) -> dict:
    return {"kind": "ObservationEvent", "source": "environment", "tool_call_id": call_id,
            "observation": {"kind": "ExecuteBashObservation", "output": output}}  # fmt: skip


def message(source: str, text: str) -> dict:
    return {
        "kind": "MessageEvent",
        "source": source,
        "llm_message": {"role": source, "content": [{"type": "text", "text": text}]},
    }


EVENTS = [
    {
        "kind": "SystemPromptEvent",
        "source": "agent",
        "system_prompt": {"type": "text", "text": "You are OpenHands."},
    },
    message("user", "Count the CSV rows."),
    act("e1", "r1", "c1", "execute_bash", {"command": "ls"}, "List first."),
    act("e2", "r1", "c2", "execute_bash", {"command": "wc -l data.csv"}),
    obs("c2", "41 data.csv"),
    obs("c1", "data.csv"),
    message("user", "Exclude the header."),
    act("e3", "r2", "c3", "execute_bash", {"command": "tail -n +2 data.csv | wc -l"}),
    {"kind": "AgentErrorEvent", "source": "agent", "tool_call_id": "c3", "error": "sandbox restarted"},
    message("agent", "There are 40 rows."),
]


def test_event_list(write):
    path = write("events.json", EVENTS)
    assert detect_format(path) == "openhands-sdk"
    trajectory = load_trajectory(path)
    assert [m["role"] for m in trajectory.root] == ["system", "user"]
    assert trajectory.task == "Count the CSV rows."
    batch, user, errored, final = trajectory.steps
    assert (batch.thought, batch.action, batch.observation) == (
        "List first.",
        "ls\nwc -l data.csv",
        "data.csv\n\n41 data.csv",
    )
    assert [m.get("tool_call_id") for m in batch.messages] == [None, "c1", "c2"]
    assert batch.messages[0]["tool_calls"][1]["function"]["name"] == "execute_bash"
    assert (user.kind, user.observation) == ("user", "Exclude the header.")
    assert errored.observation == "sandbox restarted"
    assert (final.thought, final.action) == ("There are 40 rows.", "")


def test_one_event_per_line_and_evaluation_records(write):
    lines = write("events.jsonl", "".join(json.dumps(e) + "\n" for e in EVENTS))
    assert len(load_trajectory(lines).steps) == 4
    records = [
        {"instance_id": name, "instruction": f"task {name}", "history": EVENTS[2:6]} for name in ("a", "b")
    ]
    path = write("output.jsonl", "".join(json.dumps(r) + "\n" for r in records))
    runs = load_trajectories(path)
    assert [r.meta["instance_id"] for r in runs] == ["a", "b"]
    assert load_trajectory(path, instance="b").task == "task b"  # the instruction when no user message


def test_missing_result_is_reported_not_invented(write):
    (step,) = load_trajectory(
        write("events.json", [act("e1", "r1", "c1", "execute_bash", {"command": "sleep 999"})])
    ).steps
    assert step.messages == () and step.meta["unpaired_tool_calls"] == ["c1"]


@pytest.mark.data
def test_shared_sdk_runs_round_trip(shared):
    path = shared("openhands-sdk", "output.critic_attempt_1.jsonl")
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    runs = load_trajectories(path)
    assert len(runs) == len(records)
    for trajectory, record in zip(runs, records, strict=True):
        assert trajectory.meta["instance_id"] == record["instance_id"]
        actions = [e for e in record["history"] if e["kind"] == "ActionEvent"]
        assert sum(len(s.meta.get("event_ids", [])) for s in trajectory.steps if s.action) == len(actions)
        observed = [e for e in record["history"] if e["kind"] == "ObservationEvent"]
        keys = ("output", "content", "message", "error")
        outputs = [next((e["observation"][k] for k in keys if e["observation"].get(k)), "") for e in observed]
        outputs = [o if isinstance(o, str) else "\n".join(p.get("text", "") for p in o) for o in outputs]
        text = "".join(s.observation for s in trajectory.steps if s.kind == "agent")
        assert sum(map(len, outputs)) <= len(text) <= sum(map(len, outputs)) + 2 * len(outputs)
        paired = [s for s in trajectory.steps if s.messages]
        assert all(len(s.messages) == 1 + len(s.messages[0]["tool_calls"]) for s in paired)


def saved_conversation(root, events: list[dict], start: int = 0):  # noqa: ANN001, ANN201
    """A folder as the SDK's persistence writes it: base_state.json and one file per event."""
    folder = root / "conversations" / "1f0c"
    (folder / "events").mkdir(parents=True)
    (folder / "base_state.json").write_text(json.dumps({"id": "1f0c", "agent": {"kind": "Agent"}}))
    for index, event in enumerate(events, start=start):
        name = f"event-{index:05d}-{index:08x}-0000-4000-8000-000000000000.json"
        (folder / "events" / name).write_text(json.dumps(event))
    return folder


def test_a_saved_conversation_folder_is_one_run(tmp_path):
    folder = saved_conversation(tmp_path, EVENTS)
    from_folder = load_trajectory(folder)
    (tmp_path / "events.json").write_text(json.dumps(EVENTS))
    expected = load_trajectory(tmp_path / "events.json")
    assert [s.action for s in from_folder.steps] == [s.action for s in expected.steps]
    assert load_trajectory(folder / "events").task == "Count the CSV rows."  # the events/ folder itself


def test_a_saved_conversation_reads_in_index_order_not_name_order(tmp_path):
    folder = saved_conversation(tmp_path, EVENTS, start=100_000 - len(EVENTS) + 1)
    assert sorted(p.name for p in (folder / "events").iterdir())[0].startswith(
        "event-100000-"
    )  # last, first as text
    (tmp_path / "events.json").write_text(json.dumps(EVENTS))
    assert load_trajectory(folder).steps == load_trajectory(tmp_path / "events.json").steps


def test_a_broken_event_file_names_itself(tmp_path):
    folder = saved_conversation(tmp_path, EVENTS)
    broken = sorted((folder / "events").iterdir())[3]
    broken.write_text('{"kind": "ObservationEvent",')
    with pytest.raises(TrajectoryError, match=rf"{broken.name}: invalid JSON at line 1"):
        load_trajectory(folder)


@pytest.mark.parametrize(
    "command", [["replay"], ["graph", "--out", "{out}"], ["eval", "-b", "none", "-o", "{out}"]]
)
@pytest.mark.slow
def test_the_commands_read_a_saved_conversation_folder(tmp_path, command):
    from click.testing import CliRunner

    from contextweaver.cli import main

    folder = saved_conversation(tmp_path, EVENTS)
    args = [part.replace("{out}", str(tmp_path / "out")) for part in command]
    result = CliRunner().invoke(main, [args[0], str(folder), *args[1:]])
    assert result.exit_code == 0, result.output
    assert result.exception is None
