"""Tolerant reading of the memory model's JSON replies; anything unusable raises `ReplyError` with a kind."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, MutableMapping
from typing import Any

from contextweaver.errors import ContextWeaverError
from contextweaver.prompts.render import clip
from contextweaver.records import Parent

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
_ID = re.compile(r"^\s*N?\s*(\d+)\s*$", re.IGNORECASE)


class ReplyError(ContextWeaverError, ValueError):
    """An unusable reply. `kind` is the stats counter it feeds: empty, malformed, unknown_ids, missing."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind


def extract_json(text: str) -> dict[str, Any]:
    """The JSON object in a reply, also when wrapped in a code fence or surrounded by prose."""
    stripped = (text or "").strip()
    if not stripped:
        raise ReplyError("empty", "the model returned no text")
    attempts = [stripped, *(m.group(1).strip() for m in _FENCE.finditer(stripped))]
    start, end = stripped.find("{"), stripped.rfind("}")
    if 0 <= start < end:
        attempts.append(stripped[start : end + 1])
    for attempt in attempts:
        try:
            value = json.loads(attempt)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
        if isinstance(value, list):  # a bare list of parents
            return {"parents": value}
    raise ReplyError("malformed", f"no JSON object in {stripped[:120]!r}")


def _node_index(raw: Any) -> int | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    match = _ID.match(str(raw))
    return int(match.group(1)) if match else None


def _confidence(raw: Any) -> float:
    try:
        value = float(raw)
    except (TypeError, ValueError):
        return 0.5
    return min(1.0, max(0.0, value))


def parse_parents(
    obj: dict[str, Any], valid: Collection[int], m: int, stats: MutableMapping[str, int]
) -> list[Parent]:
    """Up to `m` parents with known ids; unknown ids are dropped and counted. None left -> ReplyError."""
    items = obj.get("parents", obj.get("parent_ids"))
    if items is None and ("id" in obj or "parent" in obj):
        items = [obj]
    if not isinstance(items, list) or not items:
        raise ReplyError("missing", "no parents in the reply")
    parents: list[Parent] = []
    for item in items:
        entry = item if isinstance(item, dict) else {"id": item}
        index = _node_index(entry.get("id", entry.get("parent")))
        if index is None or index not in valid:
            stats["unknown_ids"] = stats.get("unknown_ids", 0) + 1
            continue
        if any(p.index == index for p in parents):
            continue
        reason = clip(str(entry.get("reasoning") or entry.get("reason") or ""), 60)
        parents.append(Parent(index, _confidence(entry.get("confidence")), f"llm: {reason}".rstrip(": ")))
    if not parents:
        raise ReplyError("unknown_ids", f"none of the chosen ids is a candidate: {items!r:.120}")
    parents.sort(key=lambda p: -p.confidence)  # stable: the model's order breaks ties
    return parents[:m]


def parse_text(obj: dict[str, Any], key: str, max_tokens: int) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ReplyError("missing", f"no {key!r} in the reply")
    return clip(value, max_tokens)
