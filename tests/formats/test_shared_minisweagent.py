"""Round trip on the real mini-swe-agent runs: every step and every character reaches the Steps."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from contextweaver.formats import load_trajectory
from contextweaver.tokens import content_text

pytestmark = pytest.mark.data


def nonspace(text: str) -> int:
    return sum(1 for ch in text if not ch.isspace())


def source_counts(path: Path) -> tuple[int, int, int]:
    """(steps, non-space chars of assistant text without labels/fences, chars of observations)."""
    document = json.loads(path.read_text(encoding="utf-8"))
    messages = document["messages"] if isinstance(document, dict) else document
    first = next(i for i, m in enumerate(messages) if m["role"] == "assistant")
    steps = assistant_chars = observation_chars = 0
    observations_in_step = 0
    for message in messages[first:]:
        text = content_text(message["content"])
        if message["role"] == "assistant":
            steps += 1
            observation_chars += 2 * max(0, observations_in_step - 1)  # the "\n\n" joins
            observations_in_step = 0
            label = len("THOUGHT:") if text.lstrip().startswith("THOUGHT:") else 0
            opening = re.search(r"```(bash|mswea_bash_command)", text)
            fences = len(opening.group(0)) + 3 if opening and _one_action(text) else 0
            assistant_chars += nonspace(text) - label - fences
        else:
            observations_in_step += 1
            observation_chars += len(text)
    observation_chars += 2 * max(0, observations_in_step - 1)
    return steps, assistant_chars, observation_chars


def _one_action(text: str) -> bool:
    return len(re.findall(r"```(?:bash|mswea_bash_command)\s*\n.*?\n```", text, re.DOTALL)) == 1


def files(shared) -> list[Path]:
    folder = shared("mini-swe-agent")
    return sorted(folder.glob("*.traj.json")) + sorted(shared("mini-swe-agent-testdata").glob("*.traj.json"))


def test_every_shared_run_round_trips(shared):
    paths = files(shared)
    assert len(paths) >= 30
    for path in paths:
        trajectory = load_trajectory(path)
        assert trajectory.format == "mini-swe-agent", path
        steps, assistant_chars, observation_chars = source_counts(path)
        assert len(trajectory.steps) == steps, path
        got = sum(nonspace(s.thought) + nonspace(s.action) for s in trajectory.steps)
        assert got == assistant_chars, path
        assert sum(len(s.observation) for s in trajectory.steps) == observation_chars, path
        assert [m["role"] for m in trajectory.root] == ["system", "user"], path
        assert all("extra" not in m for s in trajectory.steps for m in s.messages), path


def test_actions_are_commands_and_observations_keep_the_envelope(shared):
    trajectory = load_trajectory(shared("mini-swe-agent", "astropy__astropy-14539.traj.json"))
    with_action = [s for s in trajectory.steps if s.action]
    assert len(with_action) >= len(trajectory.steps) - 2
    assert all("```" not in s.action and not s.thought.startswith("THOUGHT:") for s in with_action)
    assert (
        sum(s.observation.startswith("<returncode>") for s in trajectory.steps) >= len(trajectory.steps) - 2
    )
