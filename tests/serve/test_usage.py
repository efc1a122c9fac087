"""Reading the providers' usage from answers: bodies and streams of the three wires, kept head and tail."""

from __future__ import annotations

import gzip
import json

import pytest

from contextweaver.serve.upstream.usage import (
    HEAD_BYTES,
    TAIL_BYTES,
    Answer,
    Answered,
    BadUsage,
    Usage,
    read_usage,
)
from contextweaver.testing.fake_wire import (
    anthropic_events,
    anthropic_message,
    responses_object,
    sse,
    wire_events,
)

ANTHROPIC_USAGE = {"input_tokens": 12, "cache_read_input_tokens": 3000, "cache_creation_input_tokens": 250,
                   "output_tokens": 77}  # fmt: skip


def anthropic_answer() -> dict:
    message = anthropic_message("claude", [{"type": "text", "text": "hello " * 40}])
    message["usage"] = dict(ANTHROPIC_USAGE)
    message["diagnostics"] = {"cache_miss_reason": {"type": "tools_changed", "cache_missed_input_tokens": 9}}
    return message


def test_anthropic_body_and_stream_give_the_same_usage() -> None:
    expected = Usage(12, 3000, 250, 77, "tools_changed")
    assert read_usage("anthropic", json.dumps(anthropic_answer()).encode(), streamed=False) == expected
    stream = b"".join(wire_events("messages", anthropic_answer()))
    assert read_usage("anthropic", stream, streamed=True) == expected  # start's input, the delta's output


def test_the_cumulative_message_delta_counts_win() -> None:
    events = list(anthropic_events(anthropic_answer()))
    name, delta = events[-2]
    delta["usage"] = {"output_tokens": 90, "input_tokens": 15, "cache_read_input_tokens": None}
    usage = read_usage("anthropic", b"".join(sse(iter(events))), streamed=True)
    assert usage == Usage(15, 3000, 250, 90, "tools_changed")


def test_openai_chat_counts_cached_tokens_inside_the_prompt() -> None:
    body = {"choices": [], "usage": {"prompt_tokens": 900, "completion_tokens": 5,
                                     "prompt_tokens_details": {"cached_tokens": 768}}}  # fmt: skip
    assert read_usage("chat", json.dumps(body).encode(), streamed=False) == Usage(132, 768, 0, 5)
    stream = (
        b'data: {"choices":[{"delta":{"content":"hi"}}],"usage":null}\n\n'
        b'data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1}}\n\ndata: [DONE]\n\n'
    )
    assert read_usage("chat", stream, streamed=True) == Usage(5, 0, 0, 1)
    no_usage = b'data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n'
    assert read_usage("chat", no_usage, streamed=True) is None


def test_a_long_responses_stream_keeps_its_usage_in_the_tail() -> None:
    text = "word " * 20_000  # far more than the head and tail together
    item = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text, "annotations": []}]}  # fmt: skip
    response = responses_object("gpt", [item])
    response["usage"] = {"input_tokens": 5000, "output_tokens": 20000, "total_tokens": 25000,
                         "input_tokens_details": {"cached_tokens": 4096}}  # fmt: skip
    response["prompt_cache_diagnostics"] = {
        "type": "cache_miss",
        "reason": "input_changed",
        "cache_missed_tokens": 3,
    }
    kept = Answer()
    for frame in wire_events("responses", response):
        for start in range(0, len(frame), 1000):  # chunks cut anywhere, as a network would
            kept.add(frame[start : start + 1000])
    assert len(kept.kept()) <= HEAD_BYTES + TAIL_BYTES + 2
    # the completed event repeats the whole output, so the gap cuts it: its usage is found in its tail
    assert read_usage("responses", kept.kept(), streamed=True) == Usage(904, 4096, 0, 20000, "input_changed")


def test_unreadable_usage_raises_and_a_compressed_body_is_read() -> None:
    with pytest.raises(BadUsage):
        read_usage("anthropic", b'{"usage": {"input_tokens": -3}}', streamed=False)
    with pytest.raises(BadUsage):
        read_usage("chat", b'{"usage": {"prompt_tokens": 3, "prompt_tokens_details": {"cached_tokens": 9}}}',
                   streamed=False)  # fmt: skip
    with pytest.raises(BadUsage):
        read_usage("chat", b'{"usage": {"prompt_tokens": 3', streamed=False)
    assert read_usage("chat", b'{"error": {"message": "no"}}', streamed=False) is None
    body = gzip.compress(json.dumps(anthropic_answer()).encode())
    assert Answered(200, body, False, "gzip").usage("anthropic") == Usage(12, 3000, 250, 77, "tools_changed")
