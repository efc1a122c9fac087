"""Inputs agents really produce: empty, giant, undecodable, unexpected roles. None may crash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contextweaver.config import WeaverConfig
from contextweaver.formats import load_trajectory
from contextweaver.records import Step
from contextweaver.weaver import ContextWeaver
from tests.core.helpers import ROOT, step


def weave(steps: list[Step], budget: int | None = None):  # noqa: ANN201
    weaver = ContextWeaver(WeaverConfig(mode="per_step"))
    weaver.begin(ROOT)
    for s in steps:
        weaver.add_step(s)
    return weaver, weaver.context(max_tokens=budget)


def test_empty_observation() -> None:
    _, context = weave([Step("Touch it.", "touch x.py", "")] + [step(i) for i in range(2, 9)])
    assert "Old environment output: (0 lines omitted, #1)" in context.text()


@pytest.mark.slow
def test_ten_megabyte_observation_is_counted_once_and_trimmed_under_a_budget() -> None:
    big = ("0123456789abcdef " * 64 + "\n") * 9_600  # ~10 MB
    weaver, context = weave([step(1), Step("Dump the log.", "cat huge.log", big)], budget=6000)
    assert len(big) > 10_000_000
    assert context.tokens <= 6000
    assert weaver.graph.node(2).full_tokens > 1_000_000
    assert context.decisions[-1].mode == "trimmed"


def test_non_utf8_bytes_in_a_trajectory_file(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    line = json.dumps({"thought": "read", "action": "cat bin.dat", "observation": "PLACEHOLDER"})
    raw = (json.dumps({"system": "s", "task": "t"}) + "\n" + line + "\n").encode()
    path.write_bytes(raw.replace(b"PLACEHOLDER", b"caf\xe9 \xff\xfe"))
    trajectory = load_trajectory(path)
    _, context = weave(trajectory.steps)
    assert "caf" in context.text()


def test_unknown_role_is_kept_with_its_step() -> None:
    odd = Step(
        thought="Ask the critic.",
        action="critic review",
        observation="looks fine",
        messages=(
            {"role": "assistant", "content": "Ask the critic.\ncritic review"},
            {"role": "critic", "content": "looks fine"},
        ),
    )
    _, context = weave([odd, *[step(i) for i in range(2, 9)]])
    roles = [m["role"] for m in context.messages]
    assert "critic" in roles
    assert {"role": "critic", "content": "Old environment output: (1 lines omitted, #1)"} in context.messages


def test_observation_with_images_says_how_many_were_omitted() -> None:
    screenshot = Step(
        thought="Look at the page.",
        action="screenshot",
        observation="page rendered\nfooter",
        messages=(
            {"role": "assistant", "content": "Look at the page.\nscreenshot"},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "page rendered\nfooter"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,BBBB"}},
                ],
            },
        ),
    )
    _, context = weave([screenshot, *[step(i) for i in range(2, 9)]])
    assert "Old environment output: (2 lines omitted, #1) (2 images omitted)" in context.text()
    assert "base64" not in str(context.messages[2:4])
