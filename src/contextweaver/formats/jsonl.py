"""ContextWeaver's own JSON Lines trajectory: the simplest way to hand us a run from any agent.

Line 1 (optional) is a header, either
    {"type": "root", "messages": [{"role": "system", "content": "..."}, {"role": "user", ...}]}
or  {"system": "You are ...", "task": "Fix the bug ..."}.
Every following line is one step:
    {"thought": "...", "action": "...", "observation": "...",      # strings, each optional
     "images": 0, "kind": "agent" | "user",                        # optional
     "messages": [{"role": "assistant", ...}, {"role": "tool", ...}],  # optional, verbatim
     "meta": {...}}                                                # optional, kept on Step.meta
A step of kind "user" is a message a person wrote mid-run (its text is the observation). Without
"messages", weaving synthesizes an assistant + user pair from the text. Blank lines are skipped.
A key not listed here is read past, and named in the trajectory's warnings with its line and the key
it was probably meant to be (a mistyped "thougth" would otherwise lose the thought without a word).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from contextweaver.formats.base import Trajectory
from contextweaver.formats.nearest import meant
from contextweaver.formats.source import Record, Source, record_values
from contextweaver.records import Message, Step

STEP_TEXT_KEYS = ("thought", "action", "observation")
STEP_KEYS = frozenset({*STEP_TEXT_KEYS, "type", "images", "kind", "messages", "meta"})
HEADER_KEYS = frozenset({"type", "messages", "system", "task", "meta"})


def is_header(value: Any) -> bool:
    return isinstance(value, dict) and (value.get("type") == "root" or "task" in value or "system" in value)


def is_step(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("type", "step") == "step"
        and any(k in value for k in STEP_TEXT_KEYS)
    )


class JsonlReader:
    name = "jsonl"
    expected = 'ContextWeaver JSON Lines (optional {"type": "root", ...} header, then one {"thought", "action", "observation"} object per line)'
    keys = STEP_KEYS | HEADER_KEYS

    def detect(self, source: Source) -> bool:
        records = record_values(source)
        if not records:
            return False
        head, *rest = records
        return (is_header(head.value) or is_step(head.value)) and all(is_step(r.value) for r in rest[:3])

    def read(self, source: Source) -> Trajectory:
        records = record_values(source)
        if records is None:
            raise source.error(f"not JSON Lines; expected {self.expected}")
        root: list[Message] = []
        meta: dict[str, Any] = {}
        unknown: dict[str, list[int]] = {}  # key -> the lines it is on
        if records and is_header(records[0].value):
            root, meta = self._header(source, records[0])
            _note_unknown(records[0], HEADER_KEYS, unknown)
            records = records[1:]
        steps = [self._step(source, record) for record in records]
        for record in records:
            _note_unknown(record, STEP_KEYS, unknown)
        return Trajectory(root=root, steps=steps, source=str(source.path), format=self.name, meta=meta,
                          warnings=[_unknown_key(key, lines) for key, lines in unknown.items()])  # fmt: skip

    def _header(self, source: Source, record: Record) -> tuple[list[Message], dict[str, Any]]:
        header = record.value
        meta = header.get("meta") if isinstance(header.get("meta"), dict) else {}
        if "messages" in header:
            messages = header["messages"]
            if not isinstance(messages, list) or not all(
                isinstance(m, dict) and "role" in m for m in messages
            ):
                raise source.error(
                    f"line {record.line}: header 'messages' must be a list of chat messages with 'role'"
                )
            return list(messages), meta
        root: list[Message] = []
        for key, role in (("system", "system"), ("task", "user")):
            value = header.get(key)
            if value is None:
                continue
            if not isinstance(value, str):
                raise source.error(
                    f"line {record.line}: header {key!r} must be a string, got {type(value).__name__}"
                )
            root.append({"role": role, "content": value})
        return root, meta

    def _step(self, source: Source, record: Record) -> Step:
        value = record.value
        where = f"line {record.line}"
        if not isinstance(value, dict):
            raise source.error(f"{where}: expected a step object, got {type(value).__name__}")
        texts = {}
        for key in STEP_TEXT_KEYS:
            text = value.get(key, "")
            if text is None:
                text = ""
            if not isinstance(text, str):
                raise source.error(f"{where}: {key!r} must be a string, got {type(text).__name__}")
            texts[key] = text
        kind = value.get("kind", "agent")
        if kind not in ("agent", "user"):
            raise source.error(f"{where}: 'kind' must be 'agent' or 'user', got {kind!r}")
        images = value.get("images", 0)
        if not isinstance(images, int) or isinstance(images, bool) or images < 0:
            raise source.error(f"{where}: 'images' must be a non-negative integer, got {images!r}")
        messages = value.get("messages") or []
        if not isinstance(messages, list) or not all(isinstance(m, dict) and "role" in m for m in messages):
            raise source.error(f"{where}: 'messages' must be a list of chat messages with 'role'")
        meta = dict(value["meta"]) if isinstance(value.get("meta"), dict) else {}
        meta["line"] = record.line
        return Step(**texts, messages=tuple(messages), images=images, kind=kind, meta=meta)


def _note_unknown(record: Record, known: frozenset[str], unknown: dict[str, list[int]]) -> None:
    if isinstance(record.value, dict) and not known.issuperset(record.value):
        for key in record.value:
            if key not in known:
                unknown.setdefault(key, []).append(record.line)


def _unknown_key(key: str, lines: list[int]) -> str:
    """'line 3: unknown key 'thougth' (did you mean 'thought'?)', once per key however many lines."""
    guess = meant(key, STEP_KEYS | HEADER_KEYS)
    hint = f"did you mean {guess!r}?" if guess else "read past"
    more = f", and on {len(lines) - 1:,} more line(s)" if len(lines) > 1 else ""
    return f"line {lines[0]}: unknown key {key!r} ({hint}){more}"


def dump_steps(path: str | Path, trajectory: Trajectory) -> None:
    """Write a Trajectory as ContextWeaver JSON Lines (root header first): the inverse of the reader."""
    with Path(path).open("w", encoding="utf-8") as handle:
        for line in _lines(trajectory):
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")


def _lines(trajectory: Trajectory) -> Iterable[dict[str, Any]]:
    yield {"type": "root", "messages": trajectory.root}
    for step in trajectory.steps:
        line: dict[str, Any] = {key: getattr(step, key) for key in STEP_TEXT_KEYS}
        if step.images:
            line["images"] = step.images
        if step.kind != "agent":
            line["kind"] = step.kind
        if step.messages:
            line["messages"] = list(step.messages)
        yield line


READER = JsonlReader()
