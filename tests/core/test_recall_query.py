"""Recall by query: what a cut left out, found by the agent's own words, verbatim, under a budget."""

from __future__ import annotations

import pytest

from contextweaver.config import WeaverConfig
from contextweaver.nodes.recall import is_answer
from contextweaver.nodes.recall_query import MAX_QUERY_CHARS, BadQuery, QueryIndex, Weights, ranked, terms
from contextweaver.records import Step
from contextweaver.tokens import count_text
from contextweaver.weaver import ContextWeaver
from tests.core.helpers import ROOT, step

ERROR = "E   AssertionError: assert paginate(items, 3)[-1] == [7] (got [], last page lost at 0x7f3a9c)"


def failing_run(lines: int = 8) -> Step:
    body = "\n".join(f"tests/test_pager.py::test_case_{j} PASSED" for j in range(lines))
    return Step(
        thought="Run the pager tests.",
        action="python -m pytest tests/test_pager.py",
        observation=f"{body}\n{ERROR}\nFAILED tests/test_pager.py::test_last_page - AssertionError\n1 failed",
    )


def weaver_with_cut(steps: int = 40, budget: int = 3000, at: int = 5, lines: int = 60) -> ContextWeaver:
    weaver = ContextWeaver(WeaverConfig(budget=budget))
    weaver.begin(ROOT)
    for i in range(1, steps + 1):
        weaver.add_step(failing_run() if i == at else step(i, lines))
        weaver.context()
    return weaver


def test_a_query_brings_back_the_exact_line_a_cut_left_out() -> None:
    weaver = weaver_with_cut()
    context = weaver.context()
    assert ERROR not in context.text()  # the cut left the failing run out
    answer = weaver.recall(query="the assertion error from the pytest run of test_pager", budget=1000)
    assert ERROR in answer.text and 5 in answer.steps
    assert "[step 5: `python -m pytest tests/test_pager.py` | failed" in answer.text
    assert count_text(answer.text) <= 1000
    assert is_answer(answer.text)  # a recall answer's old test runs are never read as a new run
    assert list(answer.steps) == sorted(answer.steps)  # in the order they happened


def test_only_what_the_context_does_not_hold_whole_is_searched() -> None:
    weaver = weaver_with_cut()
    whole = {d.index for d in weaver.context().shown if d.mode == "full"}
    assert whole
    answer = weaver.recall(query="step39_line3 value_39_3 step40_line1", budget=4000)
    assert not set(answer.steps) & whole


def test_a_record_too_big_for_the_budget_comes_back_as_an_excerpt_of_its_matching_lines() -> None:
    weaver = ContextWeaver(WeaverConfig(budget=3000))
    weaver.begin(ROOT)
    weaver.add_step(failing_run(lines=3000))
    for i in range(2, 30):
        weaver.add_step(step(i, 60))
        weaver.context()
    answer = weaver.recall(query="AssertionError paginate last page lost", budget=300)
    assert answer.steps == (1,)
    assert ERROR in answer.text and "| excerpt: " in answer.text
    assert count_text(answer.text) <= 300


def test_a_whole_record_is_the_step_byte_for_byte() -> None:
    weaver = weaver_with_cut()
    answer = weaver.recall(query="pytest test_pager AssertionError", budget=4000)
    assert weaver.nodes[5].step.observation in answer.text


def test_no_word_to_search_by_is_refused_and_a_long_query_is_read_up_to_its_bound() -> None:
    weaver = weaver_with_cut(steps=10, budget=800)
    with pytest.raises(BadQuery, match="words to search by"):
        weaver.recall(query="  ...  ")
    index = QueryIndex()
    for node in weaver.nodes[1:]:
        index.add(node.index, node.step.action)
    words = Weights(recency=0.0)
    assert ranked(index, "zz " * 10 + "pytest", range(1, 11), words) == [5]
    beyond = "zz " * (MAX_QUERY_CHARS // 3 + 1) + "pytest"  # its one matching word past the bound
    assert ranked(index, beyond, range(1, 11), words) == []


def test_recency_breaks_what_the_words_leave_equal() -> None:
    index = QueryIndex()
    for i in range(1, 6):
        index.add(i, "the same error text")
    assert ranked(index, "error", [1, 2, 3, 4, 5], Weights(recency=0.3))[0] == 5
    assert ranked(index, "unrelated", [1, 2, 3], Weights(recency=0.0)) == []


def test_bm25_prefers_the_rarer_term_and_the_shorter_record() -> None:
    index = QueryIndex()
    index.add(1, "common " * 10 + "rare_name")
    index.add(2, "common " * 10)
    index.add(3, "common " * 200 + "rare_name")
    scores = index.scores(terms("common rare_name"))
    assert scores[1] > scores[3] > 0 and scores[1] > scores[2]
    assert set(index.scores(terms("rare_name"), among={3})) == {3}


def test_a_query_with_braces_is_read_as_words() -> None:
    answer = weaver_with_cut().recall(query="the {error} of {0} pytest", budget=1000)
    assert answer.text.startswith('[recall "the {error} of {0} pytest": ') and 5 in answer.steps
