"""Fused mode: one call per step returns summary, parents and dependency summary; same fallbacks."""

from __future__ import annotations

import json

import pytest

from contextweaver.analyzers.fused import FusedAnnotator
from contextweaver.config import WeaverConfig
from contextweaver.models.fake import FakeModel
from contextweaver.testing.planted import NEW_STEP, STEPS, TASK, TRUE_PARENT, planted_graph
from contextweaver.weaver import ContextWeaver


def test_one_call_returns_all_three_parts() -> None:
    model = FakeModel()
    graph = planted_graph()
    graph.node(1).dependency_summary = "DEP-N1 located load_settings"
    annotation = FusedAnnotator(WeaverConfig(), model).annotate(
        graph.node(NEW_STEP), graph.candidates(NEW_STEP), graph, TASK, 3
    )
    assert len(model.requests) == 1 and model.requests[0]["json_schema"]["title"] == "step_annotation"
    assert annotation.parents[0].index == TRUE_PARENT
    assert "load_settings" in annotation.summary
    assert (
        "DEP-N1" in annotation.dependency_summary
        and annotation.summary.split(";")[0] in annotation.dependency_summary
    )


def test_bad_replies_fall_back_to_heuristic_and_extractive() -> None:
    graph = planted_graph()
    annotator = FusedAnnotator(WeaverConfig(), FakeModel(replies=['{"summary": "x"}', "garbage"]))
    annotation = annotator.annotate(graph.node(NEW_STEP), graph.candidates(NEW_STEP), graph, TASK, 3)
    assert annotation.parents[0].index == TRUE_PARENT and annotation.parents[0].reason.startswith("fallback")
    assert annotation.summary == annotator.extractive.summarize(graph.node(NEW_STEP), TASK)
    assert annotation.dependency_summary.endswith(annotation.summary)
    assert annotator.stats["fallbacks"] == 1 and annotator.stats["retries"] == 1


def test_missing_summary_field_is_retried() -> None:
    graph = planted_graph()
    good = json.dumps(
        {
            "summary": "reads load_settings",
            "parents": [{"id": "N1", "confidence": 0.9}],
            "dependency_summary": "N1 found it -> read it",
        }
    )
    annotator = FusedAnnotator(WeaverConfig(), FakeModel(replies=['{"parents": [{"id": "N1"}]}', good]))
    annotation = annotator.annotate(graph.node(NEW_STEP), graph.candidates(NEW_STEP), graph, TASK, 3)
    assert annotation.summary == "reads load_settings" and annotator.stats["missing"] == 1


@pytest.mark.parametrize("analyzer", ["hybrid", "llm"])
def test_weaver_in_fused_mode_makes_one_call_per_step(analyzer: str) -> None:
    model = FakeModel()
    weaver = ContextWeaver(WeaverConfig(analyzer=analyzer, llm_mode="fused"), model=model)
    weaver.begin(
        [{"role": "system", "content": "You are a coding agent."}, {"role": "user", "content": TASK}]
    )
    for step in STEPS:
        weaver.add_step(step)
    assert model.usage.total.calls == len(STEPS)
    assert weaver.graph.node(NEW_STEP).parent_ids[0] == TRUE_PARENT
    assert all(weaver.graph.node(k).summary for k in range(1, NEW_STEP + 1))
    assert all(model.usage.per_step[k].calls == 1 for k in range(1, NEW_STEP + 1))
