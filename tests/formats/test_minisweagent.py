from __future__ import annotations

import json

import pytest

from contextweaver.formats import load_trajectory
from contextweaver.formats.minisweagent import split_thought

SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
TASK = {"role": "user", "content": "<pr_description>Fix the parser</pr_description>"}


def assistant(text: str) -> dict:
    return {
        "role": "assistant",
        "content": text,
        "extra": {"response": {"id": "gen-1", "usage": {"total": 9}}},
    }


def observation(output: str, code: int = 0) -> dict:
    return {"role": "user", "content": f"<returncode>{code}</returncode>\n<output>\n{output}</output>"}


def traj(*messages: dict) -> dict:
    return {
        "trajectory_format": "mini-swe-agent-1",
        "instance_id": "demo-1",
        "info": {},
        "messages": list(messages),
    }


def test_steps_split_thought_action_and_observation(write):
    path = write(
        "run.traj.json",
        traj(
            SYSTEM,
            TASK,
            assistant("THOUGHT: List the files first.\n\n```bash\nls -la\n```"),
            observation("setup.py\nsrc\n"),
            assistant("THOUGHT: Read the parser.\n\n```bash\nnl -ba src/parse.py | sed -n '1,20p'\n```"),
            observation("     1\timport re\n"),
        ),
    )
    trajectory = load_trajectory(path)
    assert trajectory.format == "mini-swe-agent"
    assert trajectory.root == [SYSTEM, TASK]
    assert trajectory.task == TASK["content"]
    assert [s.action for s in trajectory.steps] == ["ls -la", "nl -ba src/parse.py | sed -n '1,20p'"]
    assert [s.thought for s in trajectory.steps] == ["List the files first.", "Read the parser."]
    first = trajectory.steps[0]
    assert first.observation == "<returncode>0</returncode>\n<output>\nsetup.py\nsrc\n</output>"
    assert first.messages[0] == {
        "role": "assistant",
        "content": "THOUGHT: List the files first.\n\n```bash\nls -la\n```",
    }
    assert "extra" not in first.messages[0]
    assert first.messages[1]["role"] == "user"
    assert trajectory.meta["instance_id"] == "demo-1"


def test_bare_message_list_with_v2_fence(write):
    path = write(
        "local.traj.json",
        [SYSTEM, TASK, {"role": "assistant", "content": "Say hi.\n\n```mswea_bash_command\necho hi\n```"}],
    )
    trajectory = load_trajectory(path)
    assert trajectory.format == "mini-swe-agent"
    assert trajectory.steps[0].action == "echo hi"
    assert trajectory.steps[0].observation == ""  # the run ended before an observation


def test_format_error_has_no_action_and_keeps_whole_text():
    text = "THOUGHT: two commands\n```bash\nls\n```\nand\n```bash\npwd\n```"
    thought, action = split_thought(text)
    assert action == ""
    assert thought.startswith("two commands") and "pwd" in thought


def test_python_blocks_in_thought_do_not_become_the_action():
    text = (
        "THOUGHT: The code is\n```python\nx = 1\n```\nso run it.\n\n```bash\npython -c 'print(1)'\n```\nDone."
    )
    thought, action = split_thought(text)
    assert action == "python -c 'print(1)'"
    assert "x = 1" in thought and thought.endswith("Done.")


def test_consecutive_user_messages_and_unknown_roles_join_one_step(write):
    path = write(
        "multi.traj.json",
        traj(
            SYSTEM,
            TASK,
            assistant("```bash\nmake\n```"),
            observation("built"),
            {"role": "user", "content": "Please also run the linter."},
            {"role": "critic", "content": "looks fine"},
            assistant("```bash\nmake lint\n```"),
            observation(""),
        ),
    )
    steps = load_trajectory(path).steps
    assert len(steps) == 2
    assert [m["role"] for m in steps[0].messages] == ["assistant", "user", "user", "critic"]
    assert "Please also run the linter." in steps[0].observation and "looks fine" in steps[0].observation
    assert steps[0].meta["other_roles"] == ["critic"]
    assert steps[1].observation.startswith("<returncode>0")


def test_empty_and_huge_observations(write):
    huge = "x" * 10_000_000
    path = write("big.traj.json", traj(SYSTEM, TASK, assistant("```bash\ncat big\n```"), observation(huge)))
    (step,) = load_trajectory(path).steps
    assert len(step.observation) > 10_000_000


def test_multimodal_content_counts_images(write):
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    content = [{"type": "text", "text": "screenshot:"}, image, image]
    path = write(
        "img.traj.json",
        traj(SYSTEM, TASK, assistant("```bash\nshot\n```"), {"role": "user", "content": content}),
    )
    (step,) = load_trajectory(path).steps
    assert step.images == 2
    assert step.observation == "screenshot:"


@pytest.mark.parametrize("cut", [10, 200, -3])
def test_truncated_file_names_file_and_position(write, cut):
    text = json.dumps(traj(SYSTEM, TASK, assistant("```bash\nls\n```"), observation("a\n")), indent=1)
    path = write("cut.traj.json", text[:cut])
    with pytest.raises(Exception) as info:
        load_trajectory(path)
    message = str(info.value)
    assert type(info.value).__name__ == "TrajectoryError"
    assert str(path) in message and "line" in message and "column" in message
    assert "mini-swe-agent .traj.json with 'messages'" in message


def test_v2_tool_calling_trajectory_keeps_the_calls_as_actions(tmp_path) -> None:  # noqa: ANN001
    import json

    from contextweaver.formats import load_trajectory

    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "bash", "arguments": '{"command": "ls src"}'},
    }
    document = {
        "trajectory_format": "mini-swe-agent-1.1",
        "messages": [
            {"role": "system", "content": "agent"},
            {"role": "user", "content": "fix the bug"},
            {"role": "assistant", "content": "List files.", "tool_calls": [call], "extra": {"raw": 1}},
            {"role": "tool", "tool_call_id": "call_1", "content": "pager.py"},
        ],
    }
    path = tmp_path / "run.traj.json"
    path.write_text(json.dumps(document))
    trajectory = load_trajectory(path)
    (step,) = trajectory.steps
    assert "ls src" in step.action and step.observation == "pager.py"
    assert step.messages[1]["tool_call_id"] == "call_1" and "extra" not in step.messages[0]
