"""The shipped example: loadable, realistic in shape, and byte-faithful to its JSON Lines."""

from __future__ import annotations

import json
import re

import pytest

from contextweaver.examples import example_names, example_path
from contextweaver.formats import load_trajectory


def test_example_path_resolves_and_unknown_names_list_the_valid_ones():
    assert "bugfix" in example_names()
    assert example_path().name == "bugfix.jsonl" and example_path().is_file()
    with pytest.raises(ValueError, match="available: .*bugfix"):
        example_path("nope")


def test_bugfix_example_round_trips_every_character():
    path = example_path("bugfix")
    raw = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    trajectory = load_trajectory(path)
    assert trajectory.format == "jsonl"
    assert len(trajectory.steps) == len(raw) - 1
    for key in ("thought", "action", "observation"):
        assert sum(len(getattr(s, key)) for s in trajectory.steps) == sum(
            len(r.get(key, "")) for r in raw[1:]
        )
    assert trajectory.root == raw[0]["messages"]


def test_bugfix_example_looks_like_real_agent_work():
    trajectory = load_trajectory(example_path("bugfix"))
    steps = trajectory.steps
    assert 25 <= len(steps) <= 35
    assert [s.kind for s in steps].count("user") == 1
    summaries = [
        m.group(0)
        for s in steps
        for m in re.finditer(r"^(\d+ failed, )?\d+ passed in [\d.]+s$", s.observation, re.M)
    ]
    assert any("failed" in line for line in summaries) and "failed" not in summaries[-1]
    first_failure = next(i for i, s in enumerate(steps) if "failed," in s.observation)
    assert any("passed in" in s.observation for s in steps[first_failure + 1 :])
    edited = {
        m.group(1)
        for s in steps
        for m in re.finditer(r"(?:sed -i .* |cat >> |Path\(\")([\w/]+\.\w+)", s.action)
    }
    assert len(edited) >= 3
    assert any(re.search(r"^\s+\d+\t", s.observation, re.M) for s in steps)  # cat -n listings
    assert any("Traceback" in s.observation or "Error" in s.observation for s in steps)
