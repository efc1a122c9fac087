"""A refused budget names a value that holds the request: what a context places before the newest step
whatever the budget (a person's messages, the TEST STATUS line) counts in it. Found by the weaving
properties (tests/properties), where the value named was refused in turn."""

from __future__ import annotations

import json

import pytest

from contextweaver.formats.toolcalls import chat_step
from contextweaver.records import Step
from contextweaver.strategies import build_strategy
from contextweaver.weaving.budget import BudgetError

ROOT = [
    {"role": "system", "content": "You are a coding agent. Use the tools."},
    {"role": "user", "content": "Fix pkg/core.py so that tests/test_core.py passes."},
]


def tool(n: int, output: str) -> Step:
    arguments = json.dumps({"command": "nl -ba pkg/core.py"})
    call = {"id": f"c{n}", "type": "function", "function": {"name": "bash", "arguments": arguments}}
    return chat_step([{"role": "assistant", "content": None, "tool_calls": [call]},
                      {"role": "tool", "tool_call_id": f"c{n}", "content": output}])  # fmt: skip


def tools(n: int, *outputs: str) -> Step:
    arguments = json.dumps({"command": "nl -ba pkg/core.py"})
    calls = [
        {"id": f"c{n}_{k}", "type": "function", "function": {"name": "bash", "arguments": arguments}}
        for k in range(len(outputs))
    ]
    answers = [{"role": "tool", "tool_call_id": f"c{n}_{k}", "content": out} for k, out in enumerate(outputs)]
    return chat_step([{"role": "assistant", "content": None, "tool_calls": calls}, *answers])


def test_the_value_a_refusal_names_holds_the_persons_messages_and_the_status_line() -> None:
    steps = [Step(observation="go on", kind="user"), *(tool(n, "") for n in range(2, 7))]
    steps += [Step(observation="core core core", kind="user"), tool(8, "")]
    steps += [tool(10, "tests/test_core.py::test_a PASSED\nFAILED tests/test_core.py::test_b\n2 tests ran")]
    steps += [tool(11, "\n".join(f"{i:>5}\tdef func_{i}(value): return value + {i}" for i in range(8)))]
    strategy = build_strategy("cw-perstep", seed=0).strategy
    strategy.begin(ROOT)
    for step in steps:
        strategy.add_step(step)
    with pytest.raises(BudgetError) as refused:
        strategy.context(150)
    assert "a person's messages and the TEST STATUS line" in str(refused.value)
    least = refused.value.budget.least(refused.value.need)
    context = strategy.context(least)
    assert context.tokens <= least and context.decisions[-1].mode in ("full", "trimmed")


def test_a_lazy_cut_refused_at_the_whole_budget_names_a_value_that_holds_the_status_line() -> None:
    """A lazy cut whose low mark cannot hold the root weaves at the whole budget less the TEST STATUS line;
    refused there, the value it named left the line out and was no more than the budget refused (found by
    tests/properties/test_weaving_invariants.py)."""
    person = Step(observation="go on", kind="user")
    run = "tests/test_core.py::test_a PASSED\nFAILED tests/test_core.py::test_b\n2 tests ran in 0.1s"
    steps = [person, person, tools(2, ""), tools(3, ""), tools(4, ""), tools(5, "", ""), person]
    steps += [
        tools(7, "", run),
        tools(8, "\n".join(f"{i:>5}\tdef func_{i}(value): return value + {i}" for i in range(7))),
    ]
    strategy = build_strategy("cw", seed=0).strategy
    strategy.begin(ROOT)
    refusal = None
    for step in steps:
        strategy.add_step(step)
        try:
            strategy.context(200)
        except BudgetError as exc:
            refusal = exc
    assert refusal is not None and refusal.budget is not None and refusal.need is not None
    least = refusal.budget.least(refusal.need)
    assert least > 200
    fresh = build_strategy("cw", seed=0).strategy
    fresh.begin(ROOT)
    for step in steps:
        fresh.add_step(step)
    assert fresh.context(least).decisions[-1].mode in ("full", "trimmed")
