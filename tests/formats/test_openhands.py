from __future__ import annotations

import json

import pytest

from contextweaver.formats import TrajectoryError, load_trajectories, load_trajectory

SKIPPED = {"agent_state_changed", "change_agent_state", "null", "recall"}


def response(response_id: str, *calls: tuple[str, str, str]) -> dict:
    tool_calls = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in calls]
    return {
        "id": response_id,
        "choices": [{"message": {"role": "assistant", "content": "thinking", "tool_calls": tool_calls}}],
    }


def action(event_id: int, name: str, args: dict, call_id: str, function: str, model_response: dict) -> dict:
    metadata = {"function_name": function, "tool_call_id": call_id, "model_response": model_response}
    return {"id": event_id, "source": "agent", "action": name, "args": args, "tool_call_metadata": metadata}


def observation(event_id: int, cause: int, name: str, content: str) -> dict:
    return {
        "id": event_id,
        "source": "agent",
        "observation": name,
        "cause": cause,
        "content": content,
        "extras": {},
    }


def test_event_list_groups_one_response_and_skips_bookkeeping(write):
    both = response(
        "r1", ("c1", "execute_bash", '{"command": "ls"}'), ("c2", "execute_bash", '{"command": "pwd"}')
    )
    events = [
        {"id": 0, "source": "environment", "observation": "agent_state_changed", "content": "", "extras": {}},
        {"id": 1, "source": "user", "action": "message", "args": {"content": "Rename a.py to b.py"}},
        action(2, "run", {"command": "ls", "thought": "Look first."}, "c1", "execute_bash", both),
        action(3, "run", {"command": "pwd", "thought": ""}, "c2", "execute_bash", both),
        observation(4, 3, "run", "/workspace"),
        observation(5, 2, "run", "a.py"),
        {"id": 6, "source": "user", "action": "message", "args": {"content": "Use git mv."}},
        action(
            7,
            "run",
            {"command": "git mv a.py b.py", "thought": "As asked."},
            "c3",
            "execute_bash",
            response("r2", ("c3", "execute_bash", "{}")),
        ),
        observation(8, 7, "run", ""),
        {"id": 9, "source": "agent", "action": "finish", "args": {"outputs": {}, "thought": "Renamed."}},
    ]
    trajectory = load_trajectory(write("replay.json", events))
    assert trajectory.format == "openhands-v0"
    assert trajectory.root == [{"role": "user", "content": "Rename a.py to b.py"}]
    batch, user, single, finish = trajectory.steps
    assert (batch.thought, batch.action, batch.observation) == (
        "Look first.",
        "ls\npwd",
        "a.py\n\n/workspace",
    )
    assert [m["role"] for m in batch.messages] == ["assistant", "tool", "tool"]
    assert [m["tool_call_id"] for m in batch.messages[1:]] == ["c1", "c2"]
    assert (user.kind, user.observation) == ("user", "Use git mv.")
    assert single.observation == "" and len(single.messages) == 2  # an empty result is still a result
    assert (finish.thought, finish.action, finish.messages) == ("Renamed.", "finish", ())


def test_ids_and_kinds_that_are_lists_or_objects_are_read_not_raised(write):
    """A damaged file's event id, cause or observation kind may be a list or an object: the events are read."""
    one = response("r1", ("c1", "execute_bash", '{"command": "ls"}'))
    events = [
        {"id": 1, "source": "user", "action": "message", "args": {"content": "List the files."}},
        {**action(2, "run", {"command": "ls", "thought": ""}, "c1", "execute_bash", one), "id": [2]},
        {**observation(3, 2, "run", "a.py"), "cause": [2]},
        {**observation(4, 2, "run", "b.py"), "observation": ["run"]},
    ]
    trajectory = load_trajectory(write("replay.json", events))
    assert [s.observation for s in trajectory.steps] == ["a.py"]  # matched by its cause, list and all


def test_output_jsonl_with_old_flat_events_holds_several_runs(write):
    def record(number: int, command: str) -> dict:
        history = [
            {"action": "message", "content": f"Fix issue {number}", "wait_for_response": "false"},
            {"action": "run", "command": command, "thought": "Try it."},
            {"observation": "run", "content": "done", "command": command, "exit_code": "0"},
        ]
        return {
            "issue": {"number": number},
            "instruction": f"Fix issue {number}",
            "history": history,
            "success": True,
        }

    path = write(
        "output.jsonl", json.dumps(record(7, "make")) + "\n" + json.dumps(record(9, "make test")) + "\n"
    )
    runs = load_trajectories(path)
    assert [r.meta["instance_id"] for r in runs] == [7, 9]
    assert [r.steps[0].action for r in runs] == ["make", "make test"]
    assert runs[1].steps[0].observation == "done"
    assert load_trajectory(path, instance=9).task == "Fix issue 9"
    assert load_trajectory(f"{path}#9").task == "Fix issue 9"
    with pytest.raises(TrajectoryError, match="holds 2 runs"):
        load_trajectory(path)


@pytest.mark.data
def test_shared_openhands_v0_round_trip(shared):
    paths = sorted(shared("openhands-v0").rglob("*.json*"))
    assert paths
    for path in paths:
        runs = load_trajectories(path)
        if path.suffix == ".jsonl":
            documents = [
                json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
            ]
            histories = [d["history"] for d in documents]
        else:
            histories = [json.loads(path.read_text(encoding="utf-8"))]
        assert len(runs) == len(histories), path
        for trajectory, history in zip(runs, histories, strict=True):
            assert trajectory.format == "openhands-v0" and trajectory.task, path
            agent = [s for s in trajectory.steps if s.kind == "agent"]
            user = [s for s in trajectory.steps if s.kind == "user"]
            contents = [
                str(e["content"]) for e in history if e.get("observation") and e["observation"] not in SKIPPED
            ]
            text = "".join(s.observation for s in agent)
            assert all(c in text for c in contents), path
            assert sum(map(len, contents)) <= len(text) <= sum(map(len, contents)) + 2 * len(contents), path
            said = [e for e in history if e.get("action") == "message" and e.get("source", "user") == "user"]
            assert len(user) == len(said) - 1, path
            tool_actions = [
                e
                for e in history
                if e.get("action") not in (None, "message", "system", *SKIPPED)
                and e.get("source", "agent") == "agent"
            ]
            assert sum(len(s.meta["event_ids"]) for s in agent if s.action) == len(tool_actions), path
