"""Node extraction (Algorithm 1, step 1): raw text kept verbatim, facts and token counts computed once."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from contextweaver.nodes.facts import extract_facts
from contextweaver.nodes.render import is_observation, placeholder_messages, with_handle
from contextweaver.records import PLACEHOLDER, Facts, Message, Node, Step
from contextweaver.tokens import MESSAGE_OVERHEAD, content_text, count_message, count_text

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Extraction:
    """What node extraction derives from a step alone: immutable, so nodes of several strategies share it."""

    facts: Facts
    full_tokens: int
    compressed_tokens: int
    compressed: tuple[Message, ...]
    """The step's messages with observations as placeholders (weaving copies them out, never edits them)."""
    content_tokens: tuple[int, ...] = ()
    """Tokens of each chat message's text, in order: an excerpt that keeps a whole output reads its count."""
    seconds: float = field(default=0.0, compare=False)
    """Wall time the extraction took: what a strategy would have spent on it alone (for time reports)."""


CACHED = "extraction"
"""The key of a step's cached extraction in its `__dict__`."""


def extraction_of(step: Step) -> Extraction:
    """The step's facts and token counts, computed on first use and cached on the step: every node built
    from it (each strategy of a replay builds its own) shares them. Immutable."""
    found = step.__dict__.get(CACHED)
    if found is None:
        found = step.__dict__[CACHED] = extract(step)
    return found


def cached_extraction(step: Step) -> Extraction | None:
    """The step's extraction when one was already computed (`extraction_of`), else None."""
    return step.__dict__.get(CACHED)


def extract(step: Step) -> Extraction:
    """The facts and both token counts of a step (call `extraction_of`, which caches it on the step);
    a plain extraction when that raises, so the step is still stored and woven."""
    try:
        return _extract(step)
    except Exception:
        _log.warning("extraction failed on a step: it is kept without facts", exc_info=True)
        return plain_extraction(step)


def plain_extraction(step: Step) -> Extraction:
    """No facts, tokens estimated from the text's length, each observation the bare placeholder."""
    messages = step.chat_messages()
    compressed = tuple(
        {**m, "content": PLACEHOLDER.format(lines="?")} if is_observation(step, m) else m for m in messages
    )
    content_tokens = tuple(_estimate(m) for m in messages)
    full_tokens = sum(content_tokens) + MESSAGE_OVERHEAD * len(messages)
    compressed_tokens = sum(_estimate(m) + MESSAGE_OVERHEAD for m in compressed)
    return Extraction(Facts(), full_tokens, compressed_tokens, compressed, content_tokens)


def _estimate(message: Message) -> int:
    """Tokens by length (a third of the characters, more than any real text): no tokenizer involved."""
    return len(content_text(message.get("content"))) // 3 + 1


def _extract(step: Step) -> Extraction:
    start = time.perf_counter()
    compressed = placeholder_messages(step)
    facts = extract_facts(step)
    messages = step.chat_messages()
    content_tokens = tuple(count_text(content_text(m.get("content"))) for m in messages)
    full_tokens = sum(count_message(m, c) for m, c in zip(messages, content_tokens, strict=True))
    compressed_tokens = sum(count_message(m) for m in compressed)
    elapsed = time.perf_counter() - start
    return Extraction(facts, full_tokens, compressed_tokens, compressed, content_tokens, elapsed)


def make_node(index: int, step: Step, *, recall: bool = False) -> Node:
    """A node with its facts and both token counts; nothing here is recomputed later, nor per strategy.
    With `recall` its placeholders name the step (`HANDLE`): only they are counted again, not the step."""
    found = extraction_of(step)
    node = Node(
        index=index,
        step=step,
        facts=found.facts,
        full_tokens=found.full_tokens,
        compressed_tokens=found.compressed_tokens,
        compressed=found.compressed,
        recall=recall,
    )
    if recall and step.kind == "agent":
        handled = tuple(
            {**m, "content": with_handle(str(m.get("content")), node.handle)}
            if is_observation(step, raw)
            else m
            for raw, m in zip(step.chat_messages(), found.compressed, strict=True)
        )
        extra = sum(count_message(new) - count_message(old)
                    for old, new in zip(found.compressed, handled, strict=True) if old is not new)  # fmt: skip
        node.compressed, node.compressed_tokens = handled, found.compressed_tokens + extra
    return node


def root_node(messages: Sequence[Message]) -> Node:
    """N_0: the system prompt and the task, always in the context verbatim."""
    if not messages:
        raise ValueError("no root messages: pass at least the task (a user message) to begin()")
    task = next((content_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    step = Step(observation=task, messages=tuple(dict(m) for m in messages), kind="user")
    return make_node(0, step)
