"""LLM summaries: task-conditioned node summaries, dependency summaries only from parents, fallbacks."""

from __future__ import annotations

import json

from contextweaver.config import WeaverConfig
from contextweaver.models import ModelUnavailable
from contextweaver.models.fake import FakeModel
from contextweaver.summaries import SUMMARIZERS
from contextweaver.summaries.llm import LLMSummarizer
from contextweaver.testing.planted import NEW_STEP, TASK, planted_graph


def test_summary_is_conditioned_on_the_task_and_capped() -> None:
    model = FakeModel()
    graph = planted_graph()
    summary = LLMSummarizer(WeaverConfig(), model).summarize(graph.node(1), TASK)
    assert "load_settings" in summary
    prompt = model.requests[0]["messages"][1]["content"]
    assert (
        TASK in prompt
        and "[NEW N1]" in prompt
        and model.requests[0]["json_schema"]["title"] == "node_summary"
    )
    long = json.dumps({"summary": "word " * 2000})
    capped = LLMSummarizer(WeaverConfig(), FakeModel(replies=[long])).summarize(graph.node(1), TASK)
    assert len(capped.split()) < 120


def test_dependency_summary_reads_only_the_parents_and_the_node() -> None:
    model = FakeModel()
    graph = planted_graph()
    node = graph.node(NEW_STEP)
    parent = graph.node(1)
    parent.dependency_summary = "DEP-OF-N1: grep located load_settings"
    text = LLMSummarizer(WeaverConfig(), model).dependency_summary(node, [graph.node(0), parent])
    prompt = model.requests[0]["messages"][1]["content"]
    assert "DEP-OF-N1" in prompt and node.summary in prompt
    for other in (2, 3, 4):  # nodes that are not parents never reach the prompt
        assert f"[N{other}]" not in prompt and graph.node(other).step.action not in prompt
    assert TASK not in prompt  # the incremental rule: no re-reading of the history or task
    assert "grep located load_settings" in text


def test_root_and_task_only_parents_cost_no_call() -> None:
    model = FakeModel()
    graph = planted_graph()
    summarizer = LLMSummarizer(WeaverConfig(), model)
    assert summarizer.summarize(graph.node(0), TASK)
    assert summarizer.dependency_summary(graph.node(2), [graph.node(0)]) == graph.node(2).summary
    assert model.requests == []


def test_failures_fall_back_to_extractive_and_are_counted() -> None:
    graph = planted_graph()
    summarizer = LLMSummarizer(
        WeaverConfig(), FakeModel(replies=["nope", "still nope", ModelUnavailable("500")])
    )
    summary = summarizer.summarize(graph.node(1), TASK)
    assert summary == summarizer.extractive.summarize(graph.node(1), TASK)
    dependency = summarizer.dependency_summary(graph.node(NEW_STEP), [graph.node(1)])
    assert dependency == summarizer.extractive.dependency_summary(graph.node(NEW_STEP), [graph.node(1)])
    assert (
        summarizer.stats["fallbacks"] == 2
        and summarizer.stats["malformed"] == 2
        and summarizer.stats["errors"] == 1
    )


def test_registered() -> None:
    assert SUMMARIZERS.get("llm") is LLMSummarizer
