"""The Anthropic and Responses wires convert only what a request adds, and render as before.

Each request of a growing session is read through the wire (which reuses the previous request's
conversion of the shared prefix) and compared with a conversion of the whole request from scratch:
the same chat messages, breakpoints, and rendering. Through a real proxy, a session that crosses a
lazy cut goes upstream as sent while it passes through, then byte for byte as the reference renders it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from contextweaver.config import WeaverConfig
from contextweaver.formats import anthropic as anthropic_format
from contextweaver.formats import responses as responses_format
from contextweaver.serve.gate.payload import parse_body
from contextweaver.serve.wires.anthropic import MESSAGES, _unmarked
from contextweaver.serve.wires.responses import RESPONSES
from contextweaver.serve.wires.wire import Wire, as_chat
from contextweaver.store import Session, open_store
from contextweaver.weaver import ContextWeaver
from tests.serve.processes import serve_process
from tests.serve.test_proxy_verbatim import recording_upstream

MARK = {"type": "ephemeral"}


def output(i: int) -> str:
    return "\n".join(f"def f{i}_{j}(x):  # line {j} of module {i}" for j in range(40))


def anthropic_requests(turns: int, edit: bool = True) -> Iterator[dict[str, Any]]:
    """Claude Code's shape: the breakpoint moves to the newest block; one turn is edited, one pending."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Fix the parser in src/p.py"}]
    for i in range(1, turns + 1):
        messages.append({"role": "assistant", "content": [{"type": "text", "text": f"Looking at m{i}."},
                         {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": f"cat m{i}.py"}}]})  # fmt: skip
        body = {"model": "m", "max_tokens": 64, "system": [{"type": "text", "text": "You fix bugs.", "cache_control": MARK}]}  # fmt: skip
        if i == 3:  # the call still out: the pending tail
            yield {**body, "messages": copy.deepcopy(messages)}
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": output(i)}]})  # fmt: skip
        if (
            i == 5 and edit
        ):  # an earlier turn rewritten by the client: the prefix shared with the last request ends there
            messages[2] = {"role": "assistant", "content": "m1 read again"}
        sent = copy.deepcopy(messages)
        sent[-1]["content"][-1]["cache_control"] = MARK
        yield {**body, "messages": sent}


def responses_requests(turns: int, edit: bool = True) -> Iterator[dict[str, Any]]:
    items: list[dict[str, Any]] = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix the parser"}]}]  # fmt: skip
    for i in range(1, turns + 1):
        items += [{"type": "reasoning", "id": f"r{i}", "summary": [{"type": "summary_text", "text": f"m{i} next"}]},
                  {"type": "function_call", "call_id": f"c{i}", "name": "shell", "arguments": json.dumps({"command": ["cat", f"m{i}.py"]})}]  # fmt: skip
        if i == 3:
            yield {"model": "m", "instructions": "You fix bugs.", "input": copy.deepcopy(items)}
        items.append({"type": "function_call_output", "call_id": f"c{i}", "output": output(i)})
        if i == 5 and edit:
            items[1] = {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "again"}],
            }
        yield {"model": "m", "instructions": "You fix bugs.", "input": copy.deepcopy(items)}


def anthropic_reference(payload: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The whole request converted from scratch: its chat messages and its breakpoints."""
    marks: dict[str, Any] = {}
    messages = [{**m, "content": _unmarked(m["content"], marks)} for m in payload["messages"]]
    return anthropic_format.to_chat(messages, _unmarked(payload.get("system"), {})), marks


def responses_reference(payload: dict[str, Any]) -> tuple[list[dict[str, Any]], None]:
    return responses_format.to_chat(payload["input"], payload.get("instructions")), None


CASES = [
    (MESSAGES, anthropic_requests, anthropic_reference),
    (RESPONSES, responses_requests, responses_reference),
]


@pytest.mark.parametrize(("wire", "requests", "reference"), CASES, ids=["messages", "responses"])
def test_each_request_reads_and_renders_as_a_conversion_from_scratch(
    wire: Wire, requests: Any, reference: Any
) -> None:
    passed = []
    for payload in requests(8):
        conversation, state = wire.read(copy.deepcopy(payload), "auto")
        chat, marks = reference(payload)
        assert conversation.messages == chat
        assert conversation.steps == as_chat(chat).steps
        if marks is not None:
            assert state.marks == marks
        out: dict[str, Any] = {}
        wire.write(out, conversation.messages, state)
        assert wire.passes_as_sent(state) == (out[wire.field] == payload[wire.field])
        passed.append(wire.passes_as_sent(state))
    # the rewritten assistant turn (a string) renders as blocks: from then on the body is rendered
    assert passed == ([True] * 9 if wire is RESPONSES else [True] * 5 + [False] * 4)


def expected(
    wire: Wire,
    payloads: list[dict[str, Any]],
    reference: Any,
    budget: int,
    config: WeaverConfig | None = None,
) -> list[bytes]:
    """Every request as rendered from scratch: a weaver fed its steps (with the session's settings: the
    proxy's recall hint), written back by the wire."""
    weaver, stored, out = ContextWeaver(config or WeaverConfig()), 0, []
    for payload in payloads:
        chat, marks = reference(payload)
        conversation = as_chat(chat)
        if not stored:
            weaver.begin(conversation.root)
        for step in conversation.steps[stored:]:
            weaver.add_step(step)
        stored = max(stored, len(conversation.steps))
        body = copy.deepcopy(payload)
        _, state = wire.read(copy.deepcopy(payload), "auto")
        wire.write(body, [*weaver.context(budget).messages, *conversation.pending], state)
        out.append(json.dumps(body, ensure_ascii=False, allow_nan=False).encode())
    return out


@pytest.mark.parametrize(("wire", "requests", "reference"), CASES, ids=["messages", "responses"])
@pytest.mark.slow
def test_a_session_crossing_a_lazy_cut_goes_as_sent_then_as_rendered(
    tmp_path: Path, wire: Wire, requests: Any, reference: Any
) -> None:
    payloads = list(requests(10, edit=False))
    sent = [json.dumps(p, indent=1).encode() for p in payloads]
    store = ("--budget", "2500", "--store", str(tmp_path / "s.db"))
    headers = {"content-type": "application/json", "x-contextweaver-session": "s"}
    with recording_upstream() as (upstream, received), serve_process(tmp_path, upstream, *store) as proxy:
        for body in sent:
            answer = httpx.post(
                f"{proxy.url}/v1{wire.upstream_path}", content=body, timeout=60, headers=headers
            )
            assert answer.status_code == 200, answer.text
    store_file = open_store(str(tmp_path / "s.db"))
    (info,) = store_file.sessions()
    settings = Session.open(store_file, info.id).weaver.config  # the recall hint the proxy gave the session
    store_file.close()
    rendered = expected(wire, payloads, reference, 2500, settings)
    field = wire.field
    cut = next(i for i, raw in enumerate(received) if parse_body(raw)[field] != payloads[i][field])
    assert 0 < cut < len(sent) - 1  # passed through at first, woven down later
    assert received[:cut] == sent[:cut]
    assert received[cut:] == rendered[cut:]
