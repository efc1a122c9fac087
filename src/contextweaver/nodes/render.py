"""How one node turns into chat messages: in full, compressed to the placeholder, or trimmed."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from contextweaver.tokens import (
    MESSAGE_OVERHEAD,
    count_images,
    count_message,
    count_text,
    encode,
    get_encoding,
)
from contextweaver.types import IMAGES_SUFFIX, PLACEHOLDER, Message, Node, Step, content_text

TRIM_MARKER = "\n... [{omitted} tokens of this output omitted] ...\n"


def is_observation(step: Step, message: Message) -> bool:
    """In an agent step every message but the assistant's is environment output."""
    return step.kind == "agent" and message.get("role") != "assistant"


def placeholder(content: object) -> str:
    """SWE-agent's placeholder for an elided observation, with the image count when there were any."""
    text = PLACEHOLDER.format(lines=len(content_text(content).splitlines()))
    images = count_images(content)
    return text + (IMAGES_SUFFIX.format(images=images) if images else "")


def full_messages(node: Node) -> list[Message]:
    return [dict(m) for m in node.step.chat_messages()]


def compressed_messages(node: Node) -> list[Message]:
    """Thought and action kept, each observation replaced by the placeholder (tool_call_id kept).

    Built once per step (counting an observation's lines is the costly part) and copied per use."""
    if node.compressed is None:  # a node built by hand, not by `make_node`
        node.compressed = tuple(placeholder_messages(node.step))
    return [dict(m) for m in node.compressed]


REASONING_OMITTED = "[{lines} line(s) of reasoning omitted]"


def call_messages(node: Node) -> tuple[list[Message], int]:
    """The placeholder form without the step's reasoning, and its tokens: the call alone, the thought
    replaced by a marker that says how many lines were cut. Built once per node (cuts repeat it)."""
    if node.call_form is None:
        out = compressed_messages(node)
        thought = node.step.thought.strip()
        marker = REASONING_OMITTED.format(lines=len(thought.splitlines()))
        for message in out if thought else ():
            content = message.get("content")
            if message.get("role") == "assistant" and isinstance(content, str) and thought in content:
                message["content"] = content.replace(thought, marker, 1)
        node.call_form = (tuple(out), sum(count_message(m) for m in out))
    messages, tokens = node.call_form
    return [dict(m) for m in messages], tokens


def placeholder_messages(step: Step) -> tuple[Message, ...]:
    """The step's messages with each observation replaced by its placeholder (what extraction keeps)."""
    return tuple(
        {**m, "content": placeholder(m.get("content"))} if is_observation(step, m) else m
        for m in step.chat_messages()
    )


def placeholders(node: Node) -> list[str]:
    """The placeholder of each observation message of the node, in order (what a store keeps)."""
    compressed_messages(node)
    assert node.compressed is not None
    step = node.step
    return [str(c["content"]) for m, c in zip(step.chat_messages(), node.compressed, strict=True)
            if is_observation(step, m)]  # fmt: skip


def with_placeholders(step: Step, texts: Sequence[str]) -> tuple[Message, ...]:
    """The compressed messages of a step from its stored placeholders, without reading its observations."""
    given = iter(texts)
    return tuple(
        {**m, "content": next(given)} if is_observation(step, m) else m for m in step.chat_messages()
    )


def trimmed_messages(node: Node, max_tokens: int) -> tuple[list[Message], int]:
    """Head/tail-trim the step's text so it fits in `max_tokens`; returns messages and their tokens.

    Observations are trimmed first; the assistant's own text only when the call alone does not fit.
    """
    step = node.step
    messages = step.chat_messages()
    sizes = [count_message(m) for m in messages]
    fixed = sum(size for m, size in zip(messages, sizes, strict=True) if not is_observation(step, m))
    observations = sum(1 for m in messages if is_observation(step, m))
    share = (max_tokens - fixed) // max(1, observations) - MESSAGE_OVERHEAD - 4
    trim_all = share < 16
    if trim_all:  # even the call does not fit: every message gets its proportional share
        total = max(1, sum(sizes))
    out = []
    for message, size in zip(messages, sizes, strict=True):
        limit = (max_tokens * size // total - MESSAGE_OVERHEAD - 4) if trim_all else share
        if trim_all or is_observation(step, message):
            message = {**message, "content": trim_text(content_text(message.get("content")), max(0, limit))}
        out.append(dict(message))
    return out, sum(count_message(m) for m in out)


@lru_cache(maxsize=16)
def _token_ids(text: str) -> tuple[int, ...]:
    """Encoded once per distinct giant observation, so re-trimming at other sizes only decodes."""
    return tuple(encode(text))


def trim_text(text: str, max_tokens: int) -> str:
    """Keep the head and the tail of `text` within `max_tokens`, saying how much was cut."""
    ids = _token_ids(text)
    if len(ids) <= max_tokens:
        return text
    decode = get_encoding().decode
    room = max_tokens - count_text(TRIM_MARKER.format(omitted=len(ids))) - 2
    if room < 0:
        return ""
    head_len, tail_len = room - room // 3, room // 3
    while True:
        tail = ids[len(ids) - tail_len :] if tail_len else ()
        out = (
            decode(list(ids[:head_len]))
            + TRIM_MARKER.format(omitted=len(ids) - head_len - tail_len)
            + decode(list(tail))
        )
        if count_text(out) <= max_tokens:
            return out
        if head_len + tail_len == 0:
            return ""
        head_len, tail_len = head_len * 9 // 10, tail_len * 9 // 10
