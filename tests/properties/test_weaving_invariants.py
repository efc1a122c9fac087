"""Every context any strategy weaves, over generated runs and budgets: tool calls never split from their
results, never above the budget, the system prompt and task verbatim, the newest step present, and in
lazy mode the prefix byte-stable between cuts. A budget too small is refused with a value that holds."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from contextweaver.records import Message, Step, WovenContext
from contextweaver.strategies import build_strategy
from contextweaver.testing.invariants import missing_verbatim, unpaired_tool_calls
from contextweaver.tokens import count_message
from contextweaver.weaving.budget import BudgetError
from tests.properties import sized
from tests.properties.runs import ROOT, run_steps, three_calls_beside_a_long_output

pytestmark = pytest.mark.property

STRATEGIES = [
    "cw",
    "cw-perstep",
    "cw-ancestry",
    "cw-frontier",
    "cw-select",
    "full",
    "sliding_window",
    "masking",
]
budgets = st.one_of(st.none(), st.integers(150, 12000))


def contexts(name: str, steps: Sequence[Step], budget: int | None) -> list[WovenContext | BudgetError]:
    """The context after each step (or the refusal of the budget there), as an agent would ask for them."""
    strategy = build_strategy(name, seed=0).strategy
    strategy.begin(ROOT)
    out: list[WovenContext | BudgetError] = []
    for step in steps:
        strategy.add_step(step)
        try:
            out.append(strategy.context(budget))
        except BudgetError as exc:
            out.append(exc)
    return out


def newest_present(messages: list[Message], newest: Step) -> bool:
    """The newest step's call is in the context: its assistant message, or a person's message, verbatim."""
    return newest.chat_messages()[0] in messages


@sized(40)
@given(name=st.sampled_from(STRATEGIES), steps=run_steps(), budget=budgets)
@example(name="cw", steps=[three_calls_beside_a_long_output()], budget=174)  # its text was trimmed away
@example(name="cw", steps=[three_calls_beside_a_long_output()], budget=158)
def test_every_context_keeps_the_invariants(name: str, steps: list[Step], budget: int | None) -> None:
    for k, woven in enumerate(contexts(name, steps, budget)):
        where = f"{name} at {budget}, after step {k + 1}"
        if isinstance(woven, BudgetError):
            assert budget is not None and woven.budget.least(woven.need) > budget, where
            continue
        messages = woven.messages
        assert not unpaired_tool_calls(messages), where
        assert not missing_verbatim(messages, ROOT) and messages[: len(ROOT)] == ROOT, where
        assert newest_present(messages, steps[k]), where
        if budget is not None:
            assert woven.tokens <= budget and sum(count_message(m) for m in messages) <= budget, where


@sized(20)
@given(name=st.sampled_from(STRATEGIES), steps=run_steps(min_steps=2), budget=st.integers(150, 12000))
def test_a_refused_budget_names_a_value_that_holds_the_request(
    name: str, steps: list[Step], budget: int
) -> None:
    """The least budget a refusal names weaves the same history (a fresh strategy, one context)."""
    refusals = [(k, w) for k, w in enumerate(contexts(name, steps, budget)) if isinstance(w, BudgetError)]
    if not refusals:
        return
    k, refusal = refusals[-1]
    strategy = build_strategy(name, seed=0).strategy
    strategy.begin(ROOT)
    for step in steps[: k + 1]:
        strategy.add_step(step)
    strategy.context(refusal.budget.least(refusal.need))  # must not raise


@sized(30)
@given(steps=run_steps(min_steps=3, max_steps=20), budget=st.integers(1500, 8000))
def test_lazy_contexts_between_cuts_extend_the_last_one_byte_for_byte(steps: list[Step], budget: int) -> None:
    previous: list[Message] | None = None
    for woven in contexts("cw", steps, budget):
        if isinstance(woven, BudgetError):
            previous = None
            continue
        if previous is not None and not woven.compacted:
            assert woven.messages[: len(previous)] == previous, "the frozen prefix changed without a cut"
        previous = woven.messages[:-1] if woven.test_status else list(woven.messages)
