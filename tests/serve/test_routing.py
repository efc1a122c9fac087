"""Routing a request to its session: only the messages after the stored ones are read into steps, with
the same result as reading the whole history; anything else falls back to comparing step digests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contextweaver.config import WeaverConfig
from contextweaver.serve import SessionManager, read_conversation
from contextweaver.serve.sessions.routing import DivergedHistory
from contextweaver.store.sqlite import SQLiteStore

ROOT = [
    {"role": "system", "content": "You are an agent."},
    {"role": "user", "content": "Fix tests/test_a.py"},
]


def tool_calls(steps: int) -> list[dict[str, Any]]:
    messages = list(ROOT)
    for k in range(1, steps + 1):
        call = {"id": f"c{k}", "type": "function",
                "function": {"name": "bash", "arguments": json.dumps({"command": f"cat src/m{k}.py"})}}  # fmt: skip
        messages += [{"role": "assistant", "content": f"look at m{k}", "tool_calls": [call]},
                     {"role": "tool", "tool_call_id": f"c{k}", "content": f"def f{k}(): pass"}]  # fmt: skip
    return messages


def mini_swe_agent(steps: int) -> list[dict[str, Any]]:
    messages = list(ROOT)
    for k in range(1, steps + 1):
        messages += [{"role": "assistant", "content": f"THOUGHT: read m{k}\n\n```bash\ncat src/m{k}.py\n```"},
                     {"role": "user", "content": f"<returncode>0</returncode>\n<output>\ndef f{k}(): pass\n</output>"}]  # fmt: skip
    return messages


@pytest.fixture
def manager(tmp_path: Path) -> SessionManager:
    return SessionManager(SQLiteStore(tmp_path / "s.db"), WeaverConfig())


@pytest.mark.parametrize("history", [tool_calls, mini_swe_agent])
def test_only_the_new_messages_are_read_and_the_steps_equal_a_full_read(
    manager: SessionManager, history: Any
) -> None:
    manager.weave(read_conversation(history(4)), "s")
    request = read_conversation([*history(7), {"role": "assistant", "content": "pending call"}])
    woven = manager.weave(request, "s")
    assert woven.added == 3
    assert "steps" not in request.__dict__, "the whole history was read into steps"
    full = read_conversation(history(7)).steps
    stored = manager.store.steps("s")
    assert [s.step for s in stored] == full
    assert [s.step.meta for s in stored] == [s.meta for s in full]  # positions in the request, not the window
    assert request.pending == [{"role": "assistant", "content": "pending call"}]


def test_a_person_speaking_after_the_stored_steps_is_read_from_the_whole_history(
    manager: SessionManager,
) -> None:
    manager.weave(read_conversation(tool_calls(3)), "s")
    spoken = [*tool_calls(3), {"role": "user", "content": "also run the linter"}, *tool_calls(4)[-2:]]
    assert manager.weave(read_conversation(spoken), "s").added == 2
    assert [s.step.kind for s in manager.store.steps("s")] == ["agent", "agent", "agent", "user", "agent"]


def test_an_edited_earlier_output_is_a_conflict_or_a_fork(manager: SessionManager) -> None:
    manager.weave(read_conversation(tool_calls(3)), "s")
    edited = tool_calls(4)
    edited[4] = {**edited[4], "content": "an edited output"}
    with pytest.raises(DivergedHistory, match="departs from session 's' at step 2"):
        manager.weave(read_conversation(edited), "s")
    first = manager.weave(read_conversation(tool_calls(3)), None)
    again = manager.weave(read_conversation(tool_calls(4)), None)
    fork = manager.weave(read_conversation(edited), None)
    assert first.session_id == again.session_id != fork.session_id
    assert fork.created and [s.steps for s in manager.store.sessions(manager.store.session(fork.session_id).conversation_key)] == [4, 4]  # type: ignore[union-attr]  # fmt: skip
