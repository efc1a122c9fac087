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
