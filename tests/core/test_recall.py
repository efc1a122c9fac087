"""Reversible cuts: what a cut leaves out or shortens is named in place and read back byte for byte."""

from __future__ import annotations

import re

import pytest

from contextweaver.config import WeaverConfig
from contextweaver.nodes.recall import BadHandle, page_tokens
from contextweaver.records import PLACEHOLDER, Step
from contextweaver.tokens import count_text
from contextweaver.weaver import ContextWeaver
from contextweaver.weaving.budget import Budget
from tests.core.helpers import ROOT, step


def weaver_of(n: int, lines: int = 40, **config: object) -> ContextWeaver:
    weaver = ContextWeaver(WeaverConfig(**config))
    weaver.begin(ROOT)
    for i in range(1, n + 1):
        weaver.add_step(step(i, lines))
    return weaver


def test_a_cut_names_every_step_it_shortens_and_the_note_says_how_to_read_it() -> None:
    weaver = weaver_of(30, budget=3000, mode="per_step", selector="adaptive")
    context = weaver.context()
    text = context.text()
    assert "lines omitted, #" in text
    note = next(m["content"] for m in context.messages if "ContextWeaver working state" in str(m["content"]))
    assert "`contextweaver recall N`" in note
    for decision in context.decisions:
        if decision.mode == "compressed":
            assert f"lines omitted, #{decision.index})" in text
    dropped = [d.index for d in context.decisions if d.mode == "dropped"]
    if dropped:
        assert "steps omitted:" in note
    assert context.tokens <= 3000


def test_recall_returns_the_steps_bytes_with_what_each_was() -> None:
    weaver = weaver_of(12)
    answer = weaver.recall("3")
    node = weaver.nodes[3]
    assert answer.steps == (3,) and answer.pages == 1
    assert answer.text.startswith("[step 3: `cat src/part_3.py` | ")
    assert node.step.observation in answer.text
    assert str(node.step.chat_messages()[0]["content"]) in answer.text
    assert weaver.recall("2-3,5").steps == (2, 3, 5) == weaver.recall([2, 3, 5]).steps


def test_a_large_recall_is_paged_and_the_pages_hold_every_byte() -> None:
    weaver = weaver_of(3, lines=2000, budget=4000)
    first = weaver.recall(2, more="contextweaver recall {handle} --page {page}")
    assert first.pages > 1 and "next: contextweaver recall 2 --page 2]" in first.text
    bodies = [weaver.recall(2, page=p).text.split("]\n", 1)[1] for p in range(1, first.pages + 1)]
    assert weaver.nodes[2].step.observation in "".join(bodies)
    page = page_tokens(
        Budget(4000).messages, weaver.graph.node(0).full_tokens
    )  # a quarter of the room above the root
    assert page < 1000 and all(count_text(body) <= page + 2 for body in bodies)


def test_a_handle_outside_the_steps_is_refused_with_the_range() -> None:
    weaver = weaver_of(4)
    for bad in ("0", "9", "x", "1-80"):
        with pytest.raises(BadHandle):
            weaver.recall(bad)
    with pytest.raises(BadHandle, match="1-4"):
        weaver.recall(7)


def test_recall_off_keeps_swe_agents_placeholders_and_no_recall_line() -> None:
    context = weaver_of(30, budget=3000, recall=False, mode="per_step", selector="adaptive").context()
    text = context.text()
    assert "contextweaver recall" not in text and PLACEHOLDER.format(lines=40) in text
    assert not re.search(r"omitted, #\d+", text)


def test_a_trimmed_output_names_its_step() -> None:
    weaver = ContextWeaver(WeaverConfig(budget=1500, mode="per_step"))
    weaver.begin(ROOT)
    weaver.add_step(
        Step(action="cat big.log", observation="\n".join(f"line {i} of the log" for i in range(900)))
    )
    context = weaver.context()
    assert context.decisions[-1].mode == "trimmed"
    assert re.search(r"tokens of this output omitted, #1\]", context.text())


def test_a_recall_answer_is_never_read_as_a_new_test_run() -> None:
    weaver = ContextWeaver(WeaverConfig())
    weaver.begin(ROOT)
    run = "FAILED tests/test_a.py::test_one - assert 1 == 2\n=== 1 failed in 0.1s ==="
    weaver.add_step(Step(action="python -m pytest tests/test_a.py", observation=run))
    assert weaver.tracker.failing()
    weaver.add_step(Step(action="python -m pytest tests/test_a.py", observation="=== 1 passed in 0.1s ==="))
    answer = "Script completed\nOutput:\n" + weaver.recall(1).text  # a shell tool's own lines first
    weaver.add_step(Step(action="contextweaver recall 1", observation=answer))
    assert not weaver.nodes[3].test_results and not weaver.tracker.failing()
