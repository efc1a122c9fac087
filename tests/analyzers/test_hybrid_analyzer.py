"""Hybrid: the heuristic ranks, the LLM judges only the top C, so the prompt does not grow with the history."""

from __future__ import annotations

from contextweaver.analyzers import ANALYZERS
from contextweaver.analyzers.hybrid import HybridAnalyzer
from contextweaver.analyzers.llm import LLMAnalyzer
from contextweaver.config import WeaverConfig
from contextweaver.models.fake import FakeModel
from contextweaver.nodes.extract import make_node, root_node
from contextweaver.nodes.graph import DependencyGraph
from contextweaver.records import Parent, Step
from contextweaver.testing.planted import NEW_STEP, TASK, TRUE_PARENT, planted_graph


def long_graph(n: int) -> DependencyGraph:
    """n-1 unrelated steps, then one whose true parent is step 1 (a planted long-range dependency)."""
    graph = DependencyGraph()
    graph.add(root_node([{"role": "user", "content": TASK}]))
    first = Step(
        action='grep -rn "def load_settings" src/',
        observation="src/app/settings_loader.py:42:def load_settings(path):",
    )
    for k in range(1, n):
        step = first if k == 1 else Step(action=f"ls build/out_{k}", observation=f"artifact_{k}.bin")
        graph.add(make_node(k, step))
        graph.set_parents(k, [Parent(k - 1, 0.5, "chain")])
    last = Step(
        thought="open load_settings",
        action="sed -n 40,60p src/app/settings_loader.py",
        observation="def load_settings(path):",
    )
    graph.add(make_node(n, last))
    return graph


def prompt_tokens(analyzer_cls: type[LLMAnalyzer], n: int) -> tuple[int, list[int], LLMAnalyzer]:
    model = FakeModel()
    graph = long_graph(n)
    analyzer = analyzer_cls(WeaverConfig(hybrid_top_c=8), model)
    parents = analyzer.select_parents(graph.node(n), graph.candidates(n), graph, TASK, 3)
    return model.usage.total.prompt_tokens, [p.index for p in parents], analyzer


def test_prompt_is_bounded_by_c_and_keeps_the_long_range_parent() -> None:
    small, parents_small, _ = prompt_tokens(HybridAnalyzer, 20)
    large, parents_large, _ = prompt_tokens(HybridAnalyzer, 120)
    assert parents_small[0] == parents_large[0] == 1
    assert large <= small * 1.1  # flat, not growing with the history
    full, parents_full, _ = prompt_tokens(LLMAnalyzer, 120)
    assert parents_full[0] == 1 and full > 3 * large  # the paper's listwise prompt grows


def test_shortlist_has_c_candidates_including_the_root_in_order() -> None:
    model = FakeModel()
    graph = long_graph(60)
    analyzer = HybridAnalyzer(WeaverConfig(hybrid_top_c=8), model)
    shown = analyzer.shortlist(graph.node(60), graph.candidates(60), graph)
    indices = [n.index for n in shown]
    assert (
        len(indices) == 8 and indices == sorted(indices) and 0 in indices and 1 in indices and 59 in indices
    )
    analyzer.select_parents(graph.node(60), graph.candidates(60), graph, TASK, 3)
    assert model.requests[0]["messages"][1]["content"].count("] status:") == 8


def test_positive_control_and_fallback() -> None:
    graph = planted_graph()
    analyzer = HybridAnalyzer(WeaverConfig(), FakeModel(replies=["bad", "bad"]))
    parents = analyzer.select_parents(graph.node(NEW_STEP), graph.candidates(NEW_STEP), graph, TASK, 3)
    assert parents[0].index == TRUE_PARENT and analyzer.stats["fallbacks"] == 1
    good = HybridAnalyzer(WeaverConfig(), FakeModel())
    assert (
        good.select_parents(graph.node(NEW_STEP), graph.candidates(NEW_STEP), graph, TASK, 3)[0].index
        == TRUE_PARENT
    )
    assert ANALYZERS.get("hybrid") is HybridAnalyzer
