"""The proxy's request parsing on every wire, on generated bodies: raw bytes, JSON of any shape and
message lists of plausible but wrong shapes. Parsing either reads a conversation or raises the typed
bad-request errors the routes turn into a 400 (BadPayload, BadConversation), never anything else."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

pytest.importorskip("starlette")

from contextweaver.serve.gate.payload import BadPayload, parse_body  # noqa: E402
from contextweaver.serve.wires.anthropic import MESSAGES  # noqa: E402
from contextweaver.serve.wires.conversation import BadConversation  # noqa: E402
from contextweaver.serve.wires.responses import RESPONSES  # noqa: E402
from contextweaver.serve.wires.wire import CHAT, Wire, tool_tokens  # noqa: E402
from tests.properties import sized  # noqa: E402

pytestmark = pytest.mark.property

WIRES = {wire.name: wire for wire in (CHAT, MESSAGES, RESPONSES)}
text = st.text(max_size=20)
scalar = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | text
keys = st.sampled_from(
    ["role", "content", "type", "text", "id", "tool_calls", "tool_call_id", "function", "name", "arguments",
     "call_id", "output", "input", "tool_use_id", "cache_control", "source", "image_url", "summary"]
)  # fmt: skip
roles = st.sampled_from(["system", "developer", "user", "assistant", "tool", "function", "model", ""])
json_like = st.recursive(
    scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys | text, inner, max_size=4),
    max_leaves=12,
)
block = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "tool_use", "tool_result", "image", "input_text", "output_text", "function_call",
                              "function_call_output", "message", "reasoning", "thinking"])},
    optional={"text": text | json_like, "id": text, "name": text, "input": json_like, "tool_use_id": text,
              "content": text | st.lists(json_like, max_size=2), "call_id": text, "arguments": text | json_like,
              "output": text | json_like, "role": roles},
)  # fmt: skip
call = st.fixed_dictionaries(
    {"id": text | st.integers()},
    optional={"type": st.just("function") | text, "function": st.fixed_dictionaries({}, optional={"name": text | st.none(), "arguments": text | json_like})},
)  # fmt: skip
message = st.fixed_dictionaries(
    {"role": roles},
    optional={"content": st.none() | text | st.lists(block, max_size=3) | json_like, "tool_calls": st.lists(call, max_size=2) | json_like,
              "tool_call_id": text | st.integers(), "name": text},
)  # fmt: skip
history = st.lists(st.one_of(message, block, json_like), max_size=6)


@st.composite
def well_formed(draw: Any, wire: str) -> list[Any]:
    """A history in the wire's own shape: turns of a call and its result, texts generated, and sometimes one
    item replaced by a generated one (a near miss)."""
    out: list[Any] = []
    for n in range(draw(st.integers(1, 4))):
        said, command, output = draw(text), draw(text), draw(text)
        if wire == "chat":
            out += [{"role": "user", "content": said},
                    {"role": "assistant", "content": None, "tool_calls": [{"id": f"c{n}", "type": "function",
                     "function": {"name": "bash", "arguments": json.dumps({"command": command})}}]},
                    {"role": "tool", "tool_call_id": f"c{n}", "content": output}]  # fmt: skip
        elif wire == "anthropic":
            out += [{"role": "user", "content": said or "go"},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": f"t{n}", "name": "bash", "input": {"command": command}}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{n}", "content": output}]}]  # fmt: skip
        else:
            out += [{"type": "message", "role": "user", "content": said},
                    {"type": "function_call", "call_id": f"c{n}", "name": "bash", "arguments": json.dumps({"command": command})},
                    {"type": "function_call_output", "call_id": f"c{n}", "output": output}]  # fmt: skip
    if draw(st.booleans()):
        out[draw(st.integers(0, len(out) - 1))] = draw(st.one_of(message, block, json_like))
    return out


def read(wire: Wire, body: bytes) -> None:
    """What the routes do with a body before weaving (`Routes._read`), each step's typed errors allowed."""
    try:
        payload = parse_body(body)
    except BadPayload:
        return event("bad payload")
    if not isinstance(payload, dict) or wire.field not in payload or wire.passthrough(payload) is not None:
        return event("answered by the route")  # a 400 it writes itself, or a request forwarded unchanged
    try:
        wire.read(payload, "auto")
    except BadConversation:
        return event("bad conversation")
    tool_tokens(payload)
    event("read")


@pytest.mark.parametrize("name", sorted(WIRES))
def test_a_generated_body_parses_or_is_a_typed_bad_request(name: str) -> None:
    wire = WIRES[name]
    bodies = st.one_of(
        st.binary(max_size=120),
        json_like.map(lambda v: json.dumps(v).encode()),
        st.builds(lambda h, extra: json.dumps({"model": "m", wire.field: h, **extra}).encode(), history | well_formed(name),
                  st.dictionaries(st.sampled_from(["system", "tools", "stream", "instructions"]), json_like, max_size=2)),
    )  # fmt: skip

    @sized(150)
    @given(body=bodies)
    def prop(body: bytes) -> None:
        read(wire, body)

    prop()
