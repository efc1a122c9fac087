from __future__ import annotations

import pytest

from contextweaver.config import WeaverConfig
from contextweaver.formats import load_trajectory
from contextweaver.records import Step
from contextweaver.testing.invariants import missing_verbatim, unpaired_tool_calls
from contextweaver.tokens import count_message
from contextweaver.weaver import ContextWeaver
from contextweaver.weaving.budget import BudgetError
from tests.core.helpers import ROOT, FixedParents, step


def chain_weaver(n: int, lines: int = 40) -> ContextWeaver:
    weaver = ContextWeaver(WeaverConfig(selector="ancestry", mode="per_step"))
    weaver.annotator = FixedParents({})
    weaver.begin(ROOT)
    for i in range(1, n + 1):
        weaver.add_step(step(i, lines=lines))
    return weaver


def recount(messages: list[dict]) -> int:
    return sum(count_message(m) for m in messages)


def test_budget_keeps_current_step_and_nearest_ancestors_first() -> None:
    weaver = chain_weaver(20)
    full = weaver.context()
    one_step = weaver.graph.node(20).full_tokens
    budget = weaver.graph.node(0).full_tokens + one_step * 2 + 200
    context = weaver.context(max_tokens=budget)
    assert recount(context.messages) <= budget
    assert context.tokens == recount(context.messages)
    assert 20 in context.kept and 19 in context.kept
    assert 15 not in context.kept and 15 in full.kept
    assert context.dropped, "older steps cannot all fit as placeholders either"
    assert all(d.reason.startswith("dropped to fit") for d in context.decisions if d.mode == "dropped")
    assert context.messages[:2] == ROOT


def test_oversized_observation_is_head_tail_trimmed_and_says_so() -> None:
    weaver = chain_weaver(3)
    huge = "\n".join(f"row {i}: payload_{i}" for i in range(20_000))
    weaver.add_step(Step(thought="Dump it.", action="cat data.log", observation=huge))
    context = weaver.context(max_tokens=3000)
    assert recount(context.messages) <= 3000
    last = context.decisions[-1]
    assert last.mode == "trimmed" and "trimmed" in last.reason
    text = context.text()
    assert "row 0: payload_0" in text and "row 19999: payload_19999" in text
    assert "tokens of this output omitted" in text


def test_budget_below_the_root_is_a_clear_error() -> None:
    weaver = chain_weaver(2)
    with pytest.raises(BudgetError, match="raise the budget"):
        weaver.context(max_tokens=10)


@pytest.mark.data
@pytest.mark.slow
@pytest.mark.parametrize("mode", ["lazy", "per_step"])
@pytest.mark.parametrize("budget", [4000, 8000, 16000])
@pytest.mark.slow
def test_budget_never_exceeded_on_real_trajectories(mini_swe_agent_files, budget: int, mode: str) -> None:
    for path in mini_swe_agent_files:
        trajectory = load_trajectory(path)
        weaver = ContextWeaver(WeaverConfig(mode=mode))
        weaver.begin(trajectory.root)
        for step_ in trajectory.steps:
            weaver.add_step(step_)
            try:
                context = weaver.context(max_tokens=budget)
            except BudgetError as exc:  # the call just made does not fit beside the root: refused, rightly
                assert exc.budget is not None and exc.need is not None, str(exc)
                assert exc.budget.least(exc.need) > budget, (path.name, str(exc))
                break
            assert recount(context.messages) <= budget, (path.name, len(weaver.graph))
            assert not unpaired_tool_calls(context.messages)
            assert not missing_verbatim(context.messages, trajectory.root)
            assert context.decisions[-1].mode in ("full", "trimmed")
            assert step_.chat_messages()[0] in context.messages, (path.name, len(weaver.graph))  # verbatim
