"""A step (or a root) as a store can hold it: lone surrogates replaced by U+FFFD where a session takes it.

A lone surrogate (`"\\ud800"` from a JSON escape, or a byte kept by `errors="surrogateescape"`) cannot
be encoded as UTF-8, so neither the step's digest nor the database could take the step and it was lost.
It is replaced, as the proxy replaces it in request bodies (`serve/gate/payload.py`), so the step is stored
and woven with the character U+FFFD; well-formed text, the common case, is passed through untouched.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from contextweaver.records import Message, Step

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")


def storable(step: Step) -> Step:
    """`step` itself when every string encodes as UTF-8, else a copy with lone surrogates replaced."""
    texts = (step.thought, step.action, step.observation)
    if not any(map(_has_surrogate, (*texts, step.messages))):
        return step
    thought, action, observation = (_SURROGATE.sub(REPLACEMENT, text) for text in texts)
    messages = tuple(_cleaned(message) for message in step.messages)
    return replace(step, thought=thought, action=action, observation=observation, messages=messages)


def storable_messages(messages: Sequence[Message]) -> list[Message]:
    """The root's messages with lone surrogates replaced, as a step's are (`messages` itself when clean)."""
    if not _has_surrogate(list(messages)):
        return list(messages)
    return [_cleaned(message) for message in messages]


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return _SURROGATE.search(value) is not None
    if isinstance(value, dict):
        return any(map(_has_surrogate, value.keys())) or any(map(_has_surrogate, value.values()))
    if isinstance(value, list | tuple):
        return any(map(_has_surrogate, value))
    return False


def _cleaned(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub(REPLACEMENT, value)
    if isinstance(value, dict):
        return {_cleaned(key): _cleaned(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_cleaned(item) for item in value)
    return value
