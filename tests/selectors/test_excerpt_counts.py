"""An excerpt that keeps every line of an output reads the output's count from node extraction: the
same number as counting its text again."""

from __future__ import annotations

import pytest

from contextweaver.nodes.extract import extraction_of, make_node
from contextweaver.records import Step
from contextweaver.tokens import count_message
from contextweaver.weaving.excerpts import OutputLines, build_excerpt

VIEW = "\n".join(
    f"{n:>6}\tdef helper_{n}(value): return value * {n}  # ünïcode" if n % 5 else "}" for n in range(1, 40)
)
TOOL_STEP = Step(
    "look",
    "cat a.py",
    VIEW,
    messages=(
        {
            "role": "assistant",
            "content": "look",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"cmd": "cat a.py"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": VIEW}]},
    ),
)


@pytest.mark.parametrize("step", [Step("look", "cat a.py", VIEW), TOOL_STEP])
@pytest.mark.parametrize("drop", [set(), {4}, {5}, {0, 1, 2, 3, 4, 5, 6, 7, 8}])
def test_an_excerpts_count_is_its_texts_count(step: Step, drop: set[int]) -> None:
    node = make_node(1, step)
    lines = OutputLines.of(node)
    excerpt = build_excerpt(node, lines, set(range(len(lines.lines))) - drop, "why")
    assert excerpt.tokens == sum(count_message(m) for m in excerpt.messages)
    whole = excerpt.messages[-1]["content"] == "\n".join(lines.lines)
    assert whole == (drop <= {4})  # line 4 is "}": a gap cheaper than its marker, so the output stays whole


def test_extraction_counts_each_messages_text() -> None:
    node = make_node(1, TOOL_STEP)
    counts = extraction_of(node.step).content_tokens
    assert len(counts) == 2 and counts[1] > 39 * 10
    assert node.full_tokens == sum(count_message(m) for m in TOOL_STEP.chat_messages())
    assert node.full_tokens > sum(counts) + 2 * 4  # the tool call is counted beside the texts
