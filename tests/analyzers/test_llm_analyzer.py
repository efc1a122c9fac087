"""The paper's LLM analyzer: positive control, prompt content, and every fallback counted."""

from __future__ import annotations

import json

import pytest

from contextweaver import ContextWeaver
from contextweaver.analyzers import ANALYZERS, build_analyzer
from contextweaver.analyzers.heuristic import HeuristicAnalyzer
from contextweaver.analyzers.llm import LLMAnalyzer
from contextweaver.annotate import needs_model
from contextweaver.config import WeaverConfig
from contextweaver.models import CircuitOpen, ModelTimeout
from contextweaver.models.fake import FakeModel
from contextweaver.testing.planted import NEW_STEP, TASK, TRUE_PARENT, planted_graph

GOOD = json.dumps({"parents": [{"id": "N1", "confidence": 0.8, "reasoning": "reads what N1 found"}]})


def run(model: FakeModel, k: int = NEW_STEP, m: int = 3) -> tuple[list, LLMAnalyzer]:
    graph = planted_graph()
    analyzer = LLMAnalyzer(WeaverConfig(), model)
    return analyzer.select_parents(graph.node(k), graph.candidates(k), graph, TASK, m), analyzer


def test_positive_control_llm_and_heuristic_agree_on_the_planted_parent() -> None:
    parents, analyzer = run(FakeModel())
    assert parents[0].index == TRUE_PARENT and parents[0].reason.startswith("llm:")
    assert analyzer.stats["fallbacks"] == 0 and analyzer.stats["calls"] == 1
    graph = planted_graph()
    heuristic = HeuristicAnalyzer(WeaverConfig()).select_parents(
        graph.node(NEW_STEP), graph.candidates(NEW_STEP), graph, TASK, 3
    )
    assert heuristic[0].index == TRUE_PARENT


def test_registered_and_built_from_config() -> None:
    config = WeaverConfig.model_validate({"analyzer": "llm", "memory_model": {"backend": "fake"}})
    analyzer = ContextWeaver(config).annotator.analyzer  # type: ignore[attr-defined]
    assert isinstance(analyzer, LLMAnalyzer) and isinstance(
        analyzer.model.inner, FakeModel
    )  # timed, one client
    assert ANALYZERS.get("llm") is LLMAnalyzer
    assert needs_model(config) and not needs_model(WeaverConfig())


def test_the_llm_parts_receive_their_model_and_refuse_to_run_without_one() -> None:
    config = WeaverConfig(analyzer="llm")
    with pytest.raises(TypeError, match="calls the memory model"):
        build_analyzer(config)


def test_prompt_states_the_rules_and_shows_each_candidate() -> None:
    model = FakeModel()
    run(model)
    system, user = (m["content"] for m in model.requests[0]["messages"])
    assert "information flow, not file similarity" in system
    assert "branching over chaining" in system and "Phase transitions" in system
    for i in range(NEW_STEP):
        assert f"[N{i}] status: unknown" in user
    assert (
        user.count("dependency summary:") == NEW_STEP and "[NEW N5]" in user and "at most 3 parents" in user
    )
    assert model.requests[0]["json_schema"]["properties"]["parents"]["maxItems"] == 3


def test_malformed_reply_is_retried_once_with_the_problem_shown() -> None:
    model = FakeModel(replies=["Sure! The parent is N1.", GOOD])
    parents, analyzer = run(model)
    assert [p.index for p in parents] == [1]
    assert (
        analyzer.stats["malformed"] == 1
        and analyzer.stats["retries"] == 1
        and analyzer.stats["fallbacks"] == 0
    )
    retry = model.requests[1]["messages"]
    assert (
        retry[-2] == {"role": "assistant", "content": "Sure! The parent is N1."}
        and "unusable" in retry[-1]["content"]
    )


@pytest.mark.parametrize(
    ("bad", "counter"),
    [
        ("{not json", "malformed"),
        ("", "empty"),
        ('{"parents": [{"id": "N99"}, {"id": "banana"}]}', "unknown_ids"),
        ('{"answer": "N1"}', "missing"),
    ],
)
def test_two_bad_replies_fall_back_to_heuristic_and_are_counted(bad: str, counter: str) -> None:
    parents, analyzer = run(FakeModel(replies=[bad, bad]))
    assert parents and parents[0].index == TRUE_PARENT  # the heuristic still finds it
    assert all(p.reason.startswith("fallback to heuristic") for p in parents)
    assert analyzer.stats["fallbacks"] == 1 and analyzer.stats[counter] >= 2
    assert analyzer.fallback_steps == [NEW_STEP]


def test_unknown_ids_are_dropped_and_counted_when_others_are_valid() -> None:
    reply = json.dumps({"parents": [{"id": "N42", "confidence": 0.9}, {"id": 1, "confidence": 0.7}, "N3"]})
    parents, analyzer = run(FakeModel(replies=[reply]))
    assert [p.index for p in parents] == [1, 3] and analyzer.stats["unknown_ids"] == 1


def test_top_m_by_confidence_and_clamped() -> None:
    reply = json.dumps(
        {"parents": [{"id": f"N{i}", "confidence": c} for i, c in ((2, 0.2), (1, 7), (4, 0.5))]}
    )
    parents, _ = run(FakeModel(replies=[reply]), m=2)
    assert [(p.index, p.confidence) for p in parents] == [(1, 1.0), (4, 0.5)]


def test_fenced_json_is_accepted() -> None:
    parents, analyzer = run(FakeModel(replies=[f"Here you go:\n```json\n{GOOD}\n```"]))
    assert [p.index for p in parents] == [1] and analyzer.stats["malformed"] == 0


def test_timeouts_and_open_circuit_fall_back_without_a_content_retry() -> None:
    parents, analyzer = run(FakeModel(replies=[ModelTimeout("slow")]))
    assert parents[0].reason.startswith("fallback to heuristic (ModelTimeout)")
    assert (
        analyzer.stats["errors"] == 1 and analyzer.stats["retries"] == 0 and analyzer.stats["fallbacks"] == 1
    )
    parents, analyzer = run(FakeModel(replies=[CircuitOpen("open")]))
    assert analyzer.stats["circuit_open"] == 1 and analyzer.stats["fallbacks"] == 1


def test_single_candidate_needs_no_call() -> None:
    model = FakeModel()
    parents, _ = run(model, k=1)
    assert [p.index for p in parents] == [0] and model.requests == []


def test_usage_is_attributed_to_the_step() -> None:
    model = FakeModel()
    run(model)
    assert list(model.usage.per_step) == [NEW_STEP]
    assert model.usage.per_step[NEW_STEP].prompt_tokens == model.usage.total.prompt_tokens > 0
