"""LLM summary baseline with the package's fake model: incremental, cached, marked, failure-safe."""

from __future__ import annotations

from contextweaver.baselines import BASELINES
from contextweaver.baselines.llm_summary import LLMSummary
from contextweaver.models.errors import ModelTimeout
from contextweaver.models.fake import FakeModel
from contextweaver.records import Step
from contextweaver.strategies import build_strategy

ROOT = [{"role": "system", "content": "agent"}, {"role": "user", "content": "Fix the parser."}]


def _step(i: int) -> Step:
    return Step(f"thought {i}", f"cat module_{i}.py", f"def function_{i}(): pass  # output of step {i}")


def test_one_call_per_step_leaving_the_window_with_only_the_leaving_steps() -> None:
    model = FakeModel(replies=["summary A", "summary B", "summary C"])
    strategy = BASELINES.get("llm_summary")(keep_last=3, model=model)
    assert isinstance(strategy, LLMSummary)
    strategy.begin(ROOT)
    for i in range(1, 4):
        strategy.add_step(_step(i))
    assert model.requests == []  # nothing has left the window yet
    strategy.add_step(_step(4))
    strategy.add_step(_step(5))
    assert len(model.requests) == 2
    second = model.requests[1]["messages"][-1]["content"]
    assert "PREVIOUS SUMMARY: summary A" in second
    assert "[step 2]" in second and "[step 1]" not in second and "[step 3]" not in second
    context = strategy.context()
    assert strategy.summary == "summary B" and strategy.summarized == 2
    summary_message = context.messages[2]
    assert summary_message["content"].startswith("[CONTEXT SUMMARY written by the memory model")
    assert "agent steps 1-2" in summary_message["content"] and "summary B" in summary_message["content"]
    assert context.kept == [3, 4, 5]
    assert [d.reason for d in context.decisions[:2]] == ["folded into the context summary"] * 2
    assert "output of step 1" not in context.text()
    assert strategy.context().messages == context.messages  # cached: no call from context()
    assert len(model.requests) == 2


def test_a_failed_call_keeps_old_summary_and_leaves_steps_as_placeholders() -> None:
    model = FakeModel(replies=["first summary", ModelTimeout("slow"), "caught up"])
    strategy = LLMSummary(keep_last=2, model=model)
    strategy.begin(ROOT)
    for i in range(1, 5):
        strategy.add_step(_step(i))
    assert strategy.summary == "first summary" and strategy.summarized == 1
    assert strategy.stats()["fallbacks"] == 1
    context = strategy.context()
    step2 = next(d for d in context.decisions if d.index == 2)
    assert step2.mode == "compressed" and "Old environment output" in context.text()
    strategy.add_step(_step(5))  # the next call folds both waiting steps
    assert strategy.summary == "caught up" and strategy.summarized == 3
    assert "[step 2]" in model.requests[-1]["messages"][-1]["content"]


def test_default_fake_backend_counts_usage_and_budget_holds() -> None:
    strategy = build_strategy("llm_summary", {"window": 2}).strategy
    assert isinstance(strategy, LLMSummary) and strategy.keep_last == 2
    strategy.begin(ROOT)
    for i in range(1, 9):
        strategy.add_step(_step(i))
    usage = strategy.model.usage  # type: ignore[attr-defined]
    assert usage.total.calls == 6 and usage.total.prompt_tokens > 0
    assert strategy.context(max_tokens=150).tokens <= 150


def test_messages_a_person_wrote_are_never_folded() -> None:
    strategy = LLMSummary(keep_last=2, model=FakeModel())
    strategy.begin(ROOT)
    strategy.add_step(Step(observation="please keep the public API unchanged", kind="user"))
    for i in range(2, 7):
        strategy.add_step(_step(i))
    assert strategy.summarized >= 1
    assert "please keep the public API unchanged" in strategy.context().text()
