"""Node extraction (Algorithm 1, step 1): raw text kept verbatim, facts and token counts computed once."""

from __future__ import annotations

from collections.abc import Sequence

from contextweaver.facts import extract_facts
from contextweaver.render import compressed_messages
from contextweaver.tokens import content_text, count_message
from contextweaver.types import Message, Node, Step


def make_node(index: int, step: Step) -> Node:
    """A node with its facts and both token counts; nothing here is recomputed later."""
    node = Node(index=index, step=step, facts=extract_facts(step))
    node.full_tokens = sum(count_message(m) for m in step.chat_messages())
    node.compressed_tokens = sum(count_message(m) for m in compressed_messages(node))
    return node


def root_node(messages: Sequence[Message]) -> Node:
    """N_0: the system prompt and the task, always in the context verbatim."""
    if not messages:
        raise ValueError("no root messages: pass at least the task (a user message) to begin()")
    task = next((content_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    step = Step(observation=task, messages=tuple(dict(m) for m in messages), kind="user")
    return make_node(0, step)
