"""The dev runs rewritten in mini-swe-agent v2's tool-calling shape (a `bash` tool call per response, its
output a `tool` message) read as the same steps, and the per-step selection keeps the same evidence:
what it learned from the text protocol is not tied to the shape of the messages (skipped without data)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.shared_data import absent

from contextweaver.eval.trajectory_run import evaluate
from contextweaver.formats import load_trajectory
from contextweaver.formats.minisweagent import split_thought

from .conftest import dev_files

pytestmark = [pytest.mark.data]

SELECTED = 8
"""Runs whose selection is replayed in both shapes (the whole set's steps are compared)."""


def tool_calling(document: dict[str, Any]) -> dict[str, Any]:
    """The run with each response's bash block as a tool call and the output after it as its result."""
    messages: list[dict[str, Any]] = []
    pending = ""
    for position, message in enumerate(document["messages"]):
        content = message["content"]
        if message["role"] == "assistant":
            thought, action = split_thought(content if isinstance(content, str) else "")
            pending = f"call_{position}" if action else ""
            call = {"id": pending, "type": "function",
                    "function": {"name": "bash", "arguments": json.dumps({"command": action})}}  # fmt: skip
            messages.append({"role": "assistant", "content": thought, "tool_calls": [call]} if action
                            else {"role": "assistant", "content": content})  # fmt: skip
        elif message["role"] == "user" and pending:
            messages.append({"role": "tool", "tool_call_id": pending, "content": content})
            pending = ""
        else:
            messages.append({"role": message["role"], "content": content})
    return {**document, "messages": messages}


@pytest.fixture(scope="module")
def both_shapes(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, Path]]:
    files = dev_files()
    if not files:
        pytest.skip(absent("trajectories/mini-swe-agent"))
    folder = tmp_path_factory.mktemp("tool_calling")
    pairs = []
    for path in files:
        rewritten = folder / path.name
        rewritten.write_text(json.dumps(tool_calling(json.loads(path.read_text()))))
        pairs.append((path, rewritten))
    return pairs


def test_a_tool_calling_run_reads_as_the_same_steps(both_shapes: list[tuple[Path, Path]]) -> None:
    for text, tools in both_shapes:
        steps = [(s.thought, s.action, s.observation) for s in load_trajectory(text).steps]
        assert any("tool_calls" in m for m in json.loads(tools.read_text())["messages"])
        assert [(s.thought, s.action, s.observation) for s in load_trajectory(tools).steps] == steps, (
            tools.name
        )


@pytest.mark.slow
def test_the_selection_keeps_the_same_evidence_in_either_shape(both_shapes: list[tuple[Path, Path]]) -> None:
    covered, items = {}, 0
    for shape in (0, 1):
        records = [step for pair in both_shapes[:SELECTED]
                   for step in evaluate(load_trajectory(pair[shape]), "cw-select", [None])["budgets"]["none"]]  # fmt: skip
        covered[shape] = sum(r["covered"] for r in records)
        items = sum(r["items"] for r in records)
    assert items > 100
    assert abs(covered[0] - covered[1]) <= 0.005 * items, (covered, items)
