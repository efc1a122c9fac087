"""A trimmed step with parallel calls: short outputs stay whole and leave their room to the long one, so
the call (the assistant's own text) is kept verbatim whenever it fits beside the trimmed outputs."""

from __future__ import annotations

import json

from contextweaver.nodes.extract import make_node
from contextweaver.nodes.render import trimmed_messages
from contextweaver.records import Step
from contextweaver.tokens import count_message

LISTING = "\n".join(f"{i:>5}\tdef func_{i}(value): return value + {i}" for i in range(40))
COMMANDS = ["python -m pytest -q tests/", "nl -ba pkg/core.py", "git status --short"]


def parallel_step(outputs: list[str]) -> Step:
    calls = [
        {
            "id": f"call_{j}",
            "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": c})},
        }
        for j, c in enumerate(COMMANDS)
    ]
    thought = "The core module defines the helpers; list it and run the tests."
    return Step(
        thought=thought,
        action="\n".join(COMMANDS),
        observation="\n".join(outputs),
        messages=(
            {"role": "assistant", "content": thought, "tool_calls": calls},
            *({"role": "tool", "tool_call_id": f"call_{j}", "content": o} for j, o in enumerate(outputs)),
        ),
        kind="agent",
    )


def test_short_outputs_stay_whole_and_the_call_is_verbatim() -> None:
    step = parallel_step(["", LISTING, "M pkg/core.py"])
    node = make_node(1, step)
    call = step.chat_messages()[0]
    short = (
        count_message(call) + count_message(step.chat_messages()[1]) + count_message(step.chat_messages()[3])
    )
    budget = short + 60  # an even third of the room for outputs would not hold the listing's least trim
    messages, tokens = trimmed_messages(node, budget)
    assert tokens <= budget and tokens == sum(count_message(m) for m in messages)
    assert messages[0] == call
    assert messages[1]["content"] == "" and messages[3]["content"] == "M pkg/core.py"
    assert messages[2]["content"].startswith(LISTING[:20]) and len(messages[2]["content"]) < len(LISTING)


def test_even_outputs_share_the_room_evenly() -> None:
    node = make_node(1, parallel_step([LISTING, LISTING, LISTING]))
    messages, tokens = trimmed_messages(node, 600)
    assert tokens <= 600
    sizes = [count_message(m) for m in messages[1:]]
    assert max(sizes) - min(sizes) <= 2 and all(m["content"] != LISTING for m in messages[1:])


def test_a_call_without_text_stays_verbatim_when_every_message_is_trimmed() -> None:
    """Where even the outputs' shares are too small and every message is trimmed, a call whose content is
    None (tool calls only) keeps None: an empty string made the newest call differ from what the agent sent."""
    step = parallel_step([LISTING, LISTING, LISTING])
    call = {**step.messages[0], "content": None}
    step = Step(action=step.action, observation=step.observation, messages=(call, *step.messages[1:]))
    messages, _ = trimmed_messages(make_node(1, step), 60)
    assert messages[0] == call
