from __future__ import annotations

import pytest

from contextweaver.annotate import build_annotator
from contextweaver.config import WeaverConfig
from contextweaver.records import PLACEHOLDER, Step, ValidationStatus
from contextweaver.weaver import ContextWeaver
from tests.core.helpers import ROOT, FixedParents, step


def weaver_with(edges: dict[int, list[int]], n: int, **config: object) -> ContextWeaver:
    weaver = ContextWeaver(WeaverConfig(**{"selector": "ancestry", "mode": "per_step", **config}))
    weaver.annotator = FixedParents(edges)
    weaver.begin(ROOT)
    for i in range(1, n + 1):
        weaver.add_step(step(i))
    return weaver


def test_worked_example_step_18() -> None:
    """SPEC's walkthrough of pytest-5262: ancestry {6,8,12,14,16}; every other step compressed."""
    weaver = weaver_with({18: [12, 16], 16: [14], 14: [8], 12: [8], 8: [6]}, 18)
    context = weaver.context()
    assert sorted(context.kept) == [6, 8, 12, 14, 16, 18]
    assert context.compressed == [i for i in range(1, 18) if i not in (6, 8, 12, 14, 16)]
    text = context.text()
    for i in range(1, 19):
        assert (f"step{i}_line0" in text) == (i in (6, 8, 12, 14, 16, 18))
    assert sum(text.count(PLACEHOLDER.format(lines=3).replace(")", f", #{i})")) for i in range(1, 18)) == 12
    assert context.messages[:2] == ROOT
    reasons = {d.index: d.reason for d in context.decisions}
    assert reasons[18] == "current step"
    assert reasons[8].startswith("ancestor of step 18 via step 12")
    assert "not among the W=5 ancestors" in reasons[1]


def test_warmup_returns_history_unchanged() -> None:
    weaver = weaver_with({}, 5)
    context = weaver.context()
    assert context.kept == [1, 2, 3, 4, 5] and not context.compressed
    assert all("warmup" in d.reason for d in context.decisions[:-1])
    weaver.add_step(step(6))
    assert not weaver.context().compressed  # a chain: the W=5 ancestors of step 6 are steps 1-5
    weaver.add_step(step(7))
    assert weaver.context().compressed == [1]


def test_tree_variant_m_1_gives_one_parent_per_node() -> None:
    weaver = ContextWeaver(WeaverConfig(max_parents=1))
    weaver.begin(ROOT)
    for i in range(1, 12):
        weaver.add_step(step(i))
    assert all(len(n.parents) == 1 for n in weaver.graph.nodes[1:])


def test_dependency_summaries_never_enter_the_context() -> None:
    weaver = weaver_with({}, 8)
    weaver.annotator = build_annotator(weaver.config, None)  # the real extractive summaries
    weaver.add_step(
        Step(thought="Check the tail.", action="tail -n 3 src/pager.py", observation="def paginate(items):")
    )
    text = weaver.context().text()
    for node in weaver.graph.nodes[1:]:
        if node.dependency_summary:
            assert node.dependency_summary not in text
    assert weaver.graph.last.summary and weaver.graph.last.summary not in text


def test_failed_test_run_is_labelled_and_superseded_by_the_passing_run() -> None:
    weaver = ContextWeaver(WeaverConfig(mode="per_step"))
    weaver.begin(ROOT)
    failing = (
        "tests/test_pager.py::test_last_page FAILED\n=========== 1 failed, 3 passed in 0.12s ==========="
    )
    passing = "tests/test_pager.py::test_last_page PASSED\n=========== 4 passed in 0.10s ==========="
    run = "python -m pytest -v tests/test_pager.py"
    weaver.add_step(Step(thought="Run the tests.", action=run, observation=failing))
    weaver.add_step(Step(thought="Fix it.", action="sed -i 's/n - 1/n/' src/pager.py", observation=""))
    assert weaver.graph.node(1).validation_status == ValidationStatus.FAILED
    assert 1 not in weaver.graph.candidates(3)
    weaver.add_step(Step(thought="Rerun.", action=run, observation=passing))
    assert weaver.graph.node(3).validation_status == ValidationStatus.PASSED
    assert weaver.graph.node(1).validation_status == ValidationStatus.SUPERSEDED
    assert weaver.graph.node(1).superseded_by == 3
    status = weaver.context().test_status
    assert status is not None and "test_last_page" in status and "PASSED" in status


def test_calls_out_of_order_explain_themselves() -> None:
    weaver = ContextWeaver()
    with pytest.raises(RuntimeError, match="begin"):
        weaver.add_step(step(1))
    weaver.begin(ROOT)
    with pytest.raises(RuntimeError, match="already"):
        weaver.begin(ROOT)


def test_memory_work_shares_one_model_and_reports_its_usage() -> None:
    weaver = ContextWeaver(WeaverConfig(analyzer="llm", summarizer="llm"))
    assert weaver.annotator.analyzer.model is weaver.annotator.summarizer.model is weaver.model  # type: ignore[attr-defined]
    weaver.begin(ROOT)
    for i in range(1, 5):
        weaver.add_step(step(i))
    stats = weaver.stats()
    assert stats["memory.calls"] > 0 and stats["memory.prompt_tokens"] > 0
    assert ContextWeaver().model is None  # the heuristic analyzer builds no client at all
