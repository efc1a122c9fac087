"""LLM-summary compaction at the budget's crossing: one summary call per cut, an unchanged prefix between."""

from __future__ import annotations

from contextweaver.baselines.lazy_summary import LazySummary
from contextweaver.models.fake import FakeModel
from contextweaver.records import Step

ROOT = [{"role": "system", "content": "agent"}, {"role": "user", "content": "Fix the parser."}]


def _step(i: int) -> Step:
    output = "\n".join(f"def function_{i}_{j}(): pass  # output of step {i}" for j in range(12))
    return Step(f"thought {i}", f"cat module_{i}.py", output)


def test_summarizes_only_at_a_cut_and_appends_unchanged_between_cuts() -> None:
    model = FakeModel(replies=[f"summary {n}" for n in range(20)])
    strategy = LazySummary(keep_last=3, model=model, low_water=0.5)
    strategy.begin(ROOT)
    contexts = []
    for i in range(1, 25):
        strategy.add_step(_step(i))
        contexts.append(strategy.context(max_tokens=1500))
    cuts = [c for c in contexts if c.compacted]
    assert len(cuts) >= 2 and len(model.requests) == len(cuts)  # one call per cut, none per step
    assert all(c.tokens <= 1500 for c in contexts)
    first = contexts.index(cuts[0])
    assert (
        all(not c.compacted for c in contexts[:first]) and "CONTEXT SUMMARY" not in contexts[first - 1].text()
    )
    assert "CONTEXT SUMMARY" in cuts[0].text() and cuts[0].tokens <= 750
    after = contexts[first + 1]
    assert after.compacted or after.messages[: len(cuts[0].messages)] == cuts[0].messages
