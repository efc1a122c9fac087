"""Reversible cuts on a stored run: every step a cut names reads back as the run's own bytes, and the
evidence a context lacks is one recall away."""

from __future__ import annotations

import json

import pytest
from tests.shared_data import SHARED_DATA, absent

from contextweaver.config import WeaverConfig
from contextweaver.eval.recall_reach import named_steps
from contextweaver.eval.trajectory_run import evaluate
from contextweaver.formats import load_trajectory
from contextweaver.weaver import ContextWeaver

RUN = SHARED_DATA / "trajectories" / "mini-swe-agent" / "django__django-11276.traj.json"
pytestmark = pytest.mark.skipif(not RUN.exists(), reason=absent(RUN))


def test_a_recall_returns_each_named_steps_bytes_from_the_stored_run() -> None:
    trajectory = load_trajectory(RUN)
    weaver = ContextWeaver(WeaverConfig(budget=4000))
    weaver.begin(trajectory.root)
    saved = json.loads(RUN.read_text())["messages"]
    checked = 0
    for step in trajectory.steps:
        weaver.add_step(step)
        context = weaver.context()
        if not context.compacted:
            continue
        named, cost = named_steps(context.messages)
        assert cost > 0 and named
        for index in sorted(named)[:: max(1, len(named) // 4)]:
            answer = weaver.recall(index, page=1).text
            pages = weaver.recall(index).pages
            text = "".join(weaver.recall(index, page=p).text.split("]\n", 1)[-1] for p in range(1, pages + 1))
            position = weaver.nodes[index].step.meta["message_index"]
            for message in saved[position : position + len(weaver.nodes[index].step.chat_messages())]:
                if message["role"] == "user":  # the output, byte for byte as the run saved it
                    assert message["content"] in text, (index, answer[:300])
            checked += 1
    assert checked >= 3


def test_the_evidence_a_context_lacks_is_one_recall_away() -> None:
    result = evaluate(load_trajectory(RUN), "contextweaver", [4000])
    steps = result["budgets"]["4000"]
    items = sum(s["items"] for s in steps)
    assert sum(s["covered"] for s in steps) < items  # the budget cuts evidence out
    assert sum(s["reach_covered"] for s in steps) == items
    cut = [s for s in steps if "marker_tokens" in s]
    assert cut and all(0 < s["marker_tokens"] < 400 for s in cut)
    assert any(s.get("recalls") for s in steps) and all(
        s["recall_tokens"] > 0 for s in steps if s.get("recalls")
    )
    off = evaluate(load_trajectory(RUN), "contextweaver", [4000], overrides=["recall=false"])["budgets"][
        "4000"
    ]
    assert sum(s["reach_covered"] for s in off) == sum(
        s["covered"] for s in off
    )  # nothing named without recall


def _named_in_whole_text(messages: list[dict[str, object]]) -> tuple[frozenset[int], int]:
    """The reference: the marks read in the context's joined text, as the agent reads it."""
    from contextweaver.eval.recall_reach import BETWEEN, IN_PLACE, OMITTED, RECALL_START, _handle_tokens
    from contextweaver.records import messages_to_text
    from contextweaver.tokens import count_text

    text = messages_to_text(messages)
    start = text.find(RECALL_START)
    if start < 0:
        return frozenset(), 0
    line = text[start : text.find("\n", start) if "\n" in text[start:] else len(text)]
    handles = IN_PLACE.findall(text)
    steps = {int(n) for n in handles}
    for ranges in OMITTED.findall(text):
        for part in ranges.split(", "):
            first, _, last = part.partition("-")
            steps.update(range(int(first), int(last or first) + 1))
    for first, last in BETWEEN.findall(text):
        steps.update(range(int(first), int(last) + 1))
    return frozenset(steps), count_text(line) + 1 + sum(_handle_tokens(n) for n in handles)


def test_named_steps_read_message_by_message_equal_the_whole_text_read() -> None:
    """`named_steps` with a memo carried from context to context gives what the joined text gives."""
    trajectory = load_trajectory(RUN)
    weaver = ContextWeaver(WeaverConfig(budget=4000, recall=True))
    weaver.begin(trajectory.root)
    memo: dict[int, object] = {}
    named = 0
    for step in trajectory.steps:
        weaver.add_step(step)
        messages = weaver.shared_context().messages
        found = named_steps(messages, memo)  # type: ignore[arg-type]
        assert found == _named_in_whole_text(messages)  # type: ignore[arg-type]
        named += bool(found[0])
    assert named >= 3
