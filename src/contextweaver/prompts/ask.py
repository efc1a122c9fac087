"""Ask for JSON with one corrective retry; the caller falls back when this raises."""

from __future__ import annotations

import logging
from collections.abc import Callable, MutableMapping
from typing import Any, TypeVar

from contextweaver.models.errors import CircuitOpen, ModelError
from contextweaver.prompts.parse import ReplyError, extract_json
from contextweaver.prompts.render import clip
from contextweaver.protocols import Model
from contextweaver.records import Message

T = TypeVar("T")
log = logging.getLogger("contextweaver.analyzers")

STAT_KEYS = (
    "calls",
    "retries",
    "fallbacks",
    "malformed",
    "empty",
    "missing",
    "unknown_ids",
    "errors",
    "circuit_open",
)


def new_stats() -> dict[str, int]:
    return dict.fromkeys(STAT_KEYS, 0)


def bump(stats: MutableMapping[str, int], key: str) -> None:
    stats[key] = stats.get(key, 0) + 1


def fallback_cause(exc: Exception) -> str:
    """Why a memory request fell back, in a word for logs and reasons: the model error's class, or the
    kind of unusable reply."""
    return type(exc).__name__ if isinstance(exc, ModelError) else getattr(exc, "kind", "reply")


def ask_json(
    model: Model,
    messages: list[Message],
    schema: dict[str, Any],
    read: Callable[[dict[str, Any]], T],
    stats: MutableMapping[str, int],
    *,
    max_tokens: int | None = None,
) -> T:
    """Call, parse, validate. A bad reply gets one retry that shows the model its reply and the problem
    (a different request, so a response cache cannot replay the same bad answer). Model errors are not
    retried here: the client already spent its bounded retries."""
    request = messages
    for attempt in (1, 2):
        bump(stats, "calls")
        try:
            reply = model.complete(request, json_schema=schema, max_tokens=max_tokens)
        except CircuitOpen:
            bump(stats, "circuit_open")
            raise
        except ModelError:
            bump(stats, "errors")
            raise
        try:
            return read(extract_json(reply.text))
        except ReplyError as exc:
            bump(stats, exc.kind)
            if attempt == 2:
                raise
            bump(stats, "retries")
            log.info("memory model reply unusable (%s); retrying once", exc.kind)
            request = [
                *messages,
                {"role": "assistant", "content": clip(reply.text, 300) or "(empty)"},
                {
                    "role": "user",
                    "content": f"That reply is unusable ({exc}). Reply again with only the JSON object.",
                },
            ]
    raise AssertionError("unreachable")  # pragma: no cover
