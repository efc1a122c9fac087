"""Hypothesis strategies for agent runs: tool-calling and text steps over a few files, with edits, views,
test runs and a person's messages, outputs from empty to a few thousand tokens."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from contextweaver.formats.toolcalls import chat_step
from contextweaver.records import Message, Step

ROOT: list[Message] = [
    {"role": "system", "content": "You are a coding agent. Use the tools."},
    {"role": "user", "content": "Fix pkg/core.py so that tests/test_core.py passes."},
]
FILES = ("pkg/core.py", "pkg/util.py", "tests/test_core.py", "setup.cfg")

words = st.sampled_from(
    ["core", "util", "parse", "value", "Error", "self", "return", "x = 1", "é", "\t", "漢"]
)
line = st.lists(words, min_size=0, max_size=8).map(" ".join)
output_lines = st.one_of(
    st.lists(line, max_size=12),
    st.integers(1, 400).map(lambda n: [f"{i:>5}\tdef func_{i}(value): return value + {i}" for i in range(n)]),
    st.lists(
        st.sampled_from(["tests/test_core.py::test_a PASSED", "FAILED tests/test_core.py::test_b"]),
        max_size=6,
    ).map(lambda rows: [*rows, f"{len(rows)} tests ran in 0.1s"]),
)
outputs = output_lines.map("\n".join)
commands = st.one_of(
    st.sampled_from(FILES).map(lambda f: f"nl -ba {f}"),
    st.sampled_from(FILES).map(lambda f: f"sed -i 's/value/result/' {f}"),
    st.just("python -m pytest -q tests/"),
    st.sampled_from(FILES).map(lambda f: f"cat > {f} <<'EOF'\nx = 1\nEOF"),
    st.sampled_from(["ls", "git diff", "grep -rn parse pkg/"]),
)


@st.composite
def tool_step(draw: Any, number: int) -> Step:
    """An assistant message with one to three calls, each answered by its `tool` result."""
    calls = draw(st.lists(commands, min_size=1, max_size=3))
    ids = [f"call_{number}_{i}" for i in range(len(calls))]
    assistant: Message = {
        "role": "assistant",
        "content": draw(st.one_of(st.none(), line)),
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "bash", "arguments": _arguments(c)}}
            for i, c in zip(ids, calls, strict=True)
        ],
    }
    results = [{"role": "tool", "tool_call_id": i, "content": draw(outputs)} for i in ids]
    return chat_step([assistant, *results])


def _arguments(command: str) -> str:
    import json

    return json.dumps({"command": command})


@st.composite
def run_steps(draw: Any, min_steps: int = 1, max_steps: int = 14) -> list[Step]:
    """A run: mostly tool-calling steps, some text steps (the assistant + user pair), a person's message."""
    steps = []
    for number in range(draw(st.integers(min_steps, max_steps))):
        kind = draw(st.sampled_from(["tool", "tool", "tool", "text", "user"]))
        if kind == "tool":
            steps.append(draw(tool_step(number)))
        elif kind == "text":
            steps.append(Step(draw(line), draw(commands), draw(outputs)))
        else:
            steps.append(Step(observation=draw(line) or "go on", kind="user"))
    return steps


def three_calls_beside_a_long_output() -> Step:
    """A step found by the weaving property: its text and three calls (two test runs, a heredoc) fit a small
    budget only if its long output is trimmed, and a weave once trimmed its text too (the call changed)."""
    commands = [
        "python -m pytest -q tests/",
        "python -m pytest -q tests/",
        "cat > pkg/core.py <<'EOF'\nx = 1\nEOF",
    ]
    ids = [f"call_0_{i}" for i in range(len(commands))]
    numbered = "\n".join(f"{i:>5}\tdef func_{i}(value): return value + {i}" for i in range(14))
    outputs = [
        numbered,
        "\ncore core core core\ncore core core core core core core core",
        "core core\n" + "core " * 16,
    ]
    assistant: Message = {
        "role": "assistant",
        "content": " ".join(["core"] * 10),
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "bash", "arguments": _arguments(c)}}
            for i, c in zip(ids, commands, strict=True)
        ],
    }
    results = [{"role": "tool", "tool_call_id": i, "content": o} for i, o in zip(ids, outputs, strict=True)]
    return chat_step([assistant, *results])
