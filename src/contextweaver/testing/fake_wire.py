"""Anthropic Messages and OpenAI Responses answers for the fake server: whole bodies and SSE events.

A test scripts an answer as content blocks (Anthropic) or output items (Responses); the fake
server sends it whole, or, for `stream: true`, as the event sequence each API streams, which the
real `anthropic` and `openai` SDK clients parse back into the same answer.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

Event = tuple[str, dict[str, Any]]


def anthropic_message(model: str, blocks: list[dict[str, Any]], input_tokens: int = 10) -> dict[str, Any]:
    """A complete Messages API answer holding `blocks` (text and tool_use)."""
    calls = any(b.get("type") == "tool_use" for b in blocks)
    output = sum(len(json.dumps(b)) // 4 for b in blocks)
    return {
        "id": f"msg_fake{int(time.time() * 1000) % 10**8}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": "tool_use" if calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output},
    }


def anthropic_events(message: dict[str, Any]) -> Iterator[Event]:
    """The Messages API stream of `message`: start, each block's start/deltas/stop, delta, stop."""
    yield "message_start", {"type": "message_start", "message": {**message, "content": [], "stop_reason": None,
                            "usage": {**message["usage"], "output_tokens": 1}}}  # fmt: skip
    for index, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            start, delta = (
                {**block, "input": {}},
                {"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
            )
        else:
            start, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block.get("text", "")}
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": start}
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta", "delta": {"stop_reason": message["stop_reason"],
                            "stop_sequence": None}, "usage": {"output_tokens": message["usage"]["output_tokens"]}}  # fmt: skip
    yield "message_stop", {"type": "message_stop"}


def responses_object(model: str, output: list[dict[str, Any]], input_tokens: int = 10) -> dict[str, Any]:
    """A complete Responses API answer holding `output` items (messages and function calls)."""
    items = [_with_id(item, n) for n, item in enumerate(output)]
    tokens = sum(len(json.dumps(i)) // 4 for i in items)
    return {
        "id": f"resp_fake{int(time.time() * 1000) % 10**8}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": model,
        "output": items,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {"input_tokens": input_tokens, "output_tokens": tokens, "total_tokens": input_tokens + tokens,
                  "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}},
    }  # fmt: skip


def _with_id(item: dict[str, Any], n: int) -> dict[str, Any]:
    prefix = {"message": "msg", "custom_tool_call": "ctc", "compaction": "cmp"}.get(
        item.get("type", ""), "fc"
    )
    return {"id": f"{prefix}_fake{n}", "status": "completed", **item}


def responses_events(response: dict[str, Any]) -> Iterator[Event]:
    """The Responses API stream of `response`: created, each item added/deltas/done, completed."""
    sequence = iter(range(10**6))

    def event(kind: str, **fields: Any) -> Event:
        return kind, {"type": kind, "sequence_number": next(sequence), **fields}

    yield event("response.created", response={**response, "status": "in_progress", "output": []})
    for index, item in enumerate(response["output"]):
        at = {"output_index": index, "item_id": item["id"]}
        if item["type"] == "message":
            yield event("response.output_item.added", output_index=index, item={**item, "content": [],
                                                                               "status": "in_progress"})  # fmt: skip
            for part_index, part in enumerate(item["content"]):
                yield event(
                    "response.content_part.added", **at, content_index=part_index, part={**part, "text": ""}
                )
                yield event(
                    "response.output_text.delta",
                    **at,
                    content_index=part_index,
                    delta=part["text"],
                    logprobs=[],
                )
                yield event(
                    "response.output_text.done",
                    **at,
                    content_index=part_index,
                    text=part["text"],
                    logprobs=[],
                )
                yield event("response.content_part.done", **at, content_index=part_index, part=part)
        elif item["type"] == "custom_tool_call":  # a freeform tool's input (Codex's `exec`)
            yield event("response.output_item.added", output_index=index, item={**item, "input": ""})
            yield event("response.custom_tool_call_input.delta", **at, delta=item["input"])
            yield event("response.custom_tool_call_input.done", **at, input=item["input"])
        elif item["type"] == "function_call":
            yield event("response.output_item.added", output_index=index, item={**item, "arguments": "",
                                                                               "status": "in_progress"})  # fmt: skip
            yield event("response.function_call_arguments.delta", **at, delta=item["arguments"])
            yield event("response.function_call_arguments.done", **at, arguments=item["arguments"])
        else:  # an item streamed whole (a provider's `compaction`)
            yield event("response.output_item.added", output_index=index, item=item)
        yield event("response.output_item.done", output_index=index, item=item)
    yield event("response.completed", response=response)


def sse(events: Iterator[Event]) -> Iterator[bytes]:
    """Events as server-sent-event frames (`event:` + `data:` lines)."""
    for name, data in events:
        yield f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def wire_of(path: str) -> str | None:
    """Which of these two APIs a request path is for (None: OpenAI chat)."""
    path = path.split("?")[0]
    return "messages" if path.endswith("/messages") else "responses" if path.endswith("/responses") else None


def wire_events(wire: str, answer: dict[str, Any]) -> Iterator[bytes]:
    return sse(anthropic_events(answer) if wire == "messages" else responses_events(answer))
