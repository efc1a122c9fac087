from __future__ import annotations

from contextweaver.analyzers.heuristic import HeuristicAnalyzer
from contextweaver.config import WeaverConfig
from contextweaver.records import Step
from contextweaver.weaver import ContextWeaver
from tests.core.helpers import ROOT


def run(steps: list[Step], **config: object) -> ContextWeaver:
    weaver = ContextWeaver(WeaverConfig(**config))
    weaver.begin(ROOT)
    for s in steps:
        weaver.add_step(s)
    return weaver


PLANTED = [
    Step("List the project.", "ls src", "pager.py\nformat.py\ncache.py"),
    Step(
        "Read the pager.",
        "nl -ba src/pager.py",
        "12  def paginate(items, per_page):\n13      pages = len(items) // per_page - 1",
    ),
    Step("Read the formatter.", "cat src/format.py", "def render_table(rows):\n    return '\\n'.join(rows)"),
    Step("Check the cache.", "cat src/cache.py", "class LRUCache:\n    def evict_oldest(self): ..."),
    Step("What does git say?", "git log --oneline -3", "a1b2c3d tweak README\nd4e5f6a bump version"),
    Step(
        "Look at the CI config.", "cat .github/workflows/ci.yml", "jobs:\n  test:\n    runs-on: ubuntu-latest"
    ),
    Step(
        "The bug is in paginate: `len(items) // per_page - 1` drops the last page.",
        "sed -i 's|len(items) // per_page - 1|-(-len(items) // per_page)|' src/pager.py",
        "",
    ),
]


def test_positive_control_edit_depends_on_the_view_of_the_same_code() -> None:
    weaver = run(PLANTED)
    edit = weaver.graph.node(7)
    assert edit.parents[0].index == 2
    assert "src/pager.py" in edit.parents[0].reason or "per_page" in edit.parents[0].reason
    assert 2 in weaver.context().kept


def test_recency_alone_does_not_outrank_shared_evidence() -> None:
    weaver = run(PLANTED)
    ranked = HeuristicAnalyzer().rank(weaver.graph.node(7), weaver.graph.candidates(7), weaver.graph)
    by_index = {p.index: p.confidence for p in ranked}
    assert by_index[2] > by_index.get(6, 0.0) > 0.0
    assert by_index.get(3, 0.0) < by_index[2]


def test_every_parent_has_a_reason_and_a_confidence() -> None:
    weaver = run(PLANTED)
    for node in weaver.graph.nodes[1:]:
        assert node.parents
        for parent in node.parents:
            assert parent.reason and 0.0 < parent.confidence <= 1.0


def test_run_after_edit_links_the_test_run_to_the_edit() -> None:
    steps = [
        *PLANTED,
        Step("Run the tests.", "python -m pytest -q tests/test_pager.py", "4 passed in 0.05s"),
    ]
    weaver = run(steps)
    assert 7 in weaver.graph.node(8).parent_ids


def test_failed_steps_are_never_chosen_as_parents() -> None:
    failing = Step(
        "Run the tests.",
        "python -m pytest -q tests/test_pager.py",
        "F...\nFAILED tests/test_pager.py::test_last_page - AssertionError: per_page\n1 failed, 3 passed in 0.04s",
    )
    follow = Step(
        "Look at the assertion about per_page in test_last_page.",
        "grep -n per_page tests/test_pager.py",
        "3: per_page = 10",
    )
    weaver = run([*PLANTED, failing, follow])
    assert weaver.graph.node(8).validation_status == "failed"
    assert 8 not in weaver.graph.node(9).parent_ids


def test_cost_per_step_does_not_scan_the_history() -> None:
    """The analyzer indexes each node once; scoring touches only postings of the new step's items."""
    analyzer = HeuristicAnalyzer()
    weaver = ContextWeaver()
    weaver.annotator.analyzer = analyzer  # type: ignore[attr-defined]
    weaver.begin(ROOT)
    for i in range(300):
        weaver.add_step(Step(f"Look at part {i}.", f"cat src/part_{i}.py", f"def part_{i}(): return {i}"))
    assert analyzer._indexed == 300  # every earlier node indexed exactly once, lazily
    assert sum(len(v) for v in analyzer._observed.values()) < 300 * 10
