"""The budget's one answer (`weaving/budget.py`): every refusal names a value that then works."""

from __future__ import annotations

import re

import pytest

from contextweaver.config import WeaverConfig
from contextweaver.integrations.feed import budgeted_context
from contextweaver.records import Step
from contextweaver.weaver import ContextWeaver
from contextweaver.weaving.budget import Budget, BudgetError, Need

ROOT = [{"role": "system", "content": "rule " * 900}, {"role": "user", "content": "fix the parser"}]


def weaver(mode: str) -> ContextWeaver:
    woven = ContextWeaver(WeaverConfig(mode=mode))
    woven.begin(ROOT)
    for i in range(8):
        woven.add_step(Step(thought=f"look {i}", action=f"cat part_{i}.py", observation=f"line {i}\n" * 150))
    return woven


def asked(message: str) -> tuple[int, int]:
    least = re.search(r"to at least (\d+) tokens", message)
    suggested = re.search(r"suggested: (\d+)", message)
    assert least and suggested, message
    return int(least.group(1)), int(suggested.group(1))


def test_least_is_the_smallest_hundred_that_holds_the_need() -> None:
    need = Need(root=3_456, newest=200, newest_full=900)
    budget = Budget(1_000, tools=2_178)
    least = budget.least(need)
    assert least % 100 == 0
    assert Budget(least, tools=2_178).holds(need)
    assert not Budget(least - 100, tools=2_178).holds(need)
    assert budget.suggested(need) > least


def test_the_safety_factor_scales_what_is_asked() -> None:
    need = Need(root=4_000)
    assert Budget(1, safety_factor=1.5).least(need) == 6_000
    assert Budget(6_000, safety_factor=1.5).holds(need)
    assert not Budget(5_999, safety_factor=1.5).holds(need)


@pytest.mark.parametrize("mode", ["lazy", "per_step"])
@pytest.mark.parametrize("tools", [0, 2_000])
def test_a_refusal_with_tools_names_a_budget_that_then_works(mode: str, tools: int) -> None:
    """The proxy and the integrations send tool definitions whole: the number asked includes them."""
    woven = weaver(mode)
    with pytest.raises(BudgetError) as refused:
        budgeted_context(woven, woven.graph.node(0).full_tokens + 60 + tools, tools)
    least, suggested = asked(str(refused.value))
    if tools:
        assert f"tool definitions ({tools:,} tokens)" in str(refused.value)
    for value in (least, suggested):
        context = budgeted_context(weaver(mode), value, tools)
        assert context.tokens + tools <= value


def test_a_refusal_names_the_budget_as_given_not_a_cuts_target() -> None:
    woven = weaver("lazy")
    with pytest.raises(BudgetError, match=r"a budget of 1,000 tokens cannot hold the system prompt and task"):
        woven.context(max_tokens=1_000)


def test_tools_past_the_budget_name_the_tools_not_a_budget_of_one_token() -> None:
    with pytest.raises(BudgetError) as refused:
        budgeted_context(weaver("lazy"), 3_000, 4_000)
    message = str(refused.value)
    assert "a budget of 3,000 tokens" in message and "tool definitions (4,000 tokens)" in message
    least, _ = asked(message)
    assert budgeted_context(weaver("lazy"), least, 4_000).tokens <= least - 4_000


def test_a_refusal_crosses_a_process_boundary_with_its_numbers() -> None:
    """The proxy weaves in worker processes: the refusal comes back pickled, still able to be restated."""
    import pickle

    refused = BudgetError.of(Budget(1_000), Need(root=1_500, newest=200, newest_full=800))
    back = pickle.loads(pickle.dumps(refused))
    assert str(back) == str(refused) and back.need == refused.need
    assert "tool definitions (300 tokens)" in str(back.restated(Budget(1_000, tools=300)))


def test_room_ahead_is_asked_for_but_not_required_to_hold() -> None:
    from contextweaver.weaving.budget import TYPICAL_STEP, ahead_of

    need = ahead_of(Need(root=3_000))
    budget = Budget(3_000, tools=500)
    assert not budget.holds(need) and Budget(3_500, tools=500).holds(need)  # the step is not sent yet
    assert budget.least(need) == 3_000 + 500 + TYPICAL_STEP
    assert "(with room for a typical next step of 900 tokens; suggested: " in budget.refusal(need)
    bigger = ahead_of(Need(root=3_000, newest=1_500, newest_full=4_000))
    assert budget.least(bigger) == 5_000  # a newest step larger than a typical one is asked in full


def test_a_retry_with_more_tools_leads_with_the_first_attempts_value() -> None:
    first, retry = Need(root=3_000, ahead=900), Need(root=3_050, ahead=900)
    message = Budget(1_000, tools=9_000).retried(retry, first, 2_000)
    least, _ = asked(message)
    assert least == Budget(1_000, tools=2_000).least(first) == 5_900
    assert "this retry sends 7,050 more tokens" in message and "needs at least 13000" in message
