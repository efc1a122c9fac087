"""Codex CLI rollouts: `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`.

Each line is `{"timestamp", "type", "payload"}`. `response_item` payloads are the Responses API
items the model saw (messages, reasoning, function_call / function_call_output, custom and local
shell calls); they become chat messages through formats/responses.py and Steps as for any chat.
`session_meta` (id, cwd, cli_version, instructions) and `turn_context` (model, cwd, policies) go
to meta; `event_msg` lines repeat the items for the UI and are skipped. A `compacted` line is a
compaction: the summary the run continued from becomes a user step and meta["compactions"]
counts them (its `replacement_history` repeats earlier items and is not read). Older rollouts
(a bare session header line, then the items themselves) are read the same way.

Root = everything the model was given before its first output item: the developer and user
messages (permissions, `<environment_context>`, the task) and, since 0.171, an `additional_tools`
item (the tool list, an input item: responses.is_input). The base instructions are added as a
system message only when no message already carries them (0.171 sends them as a developer
message). Code mode's `exec` output starts with a "Script completed / Wall time / Output:" part,
left out of the observation (the messages keep it).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from contextweaver.formats import responses
from contextweaver.formats.base import Trajectory
from contextweaver.formats.openai import chat_trajectory
from contextweaver.formats.source import Record, Source, record_values
from contextweaver.formats.toolcalls import OBSERVATION_SEPARATOR, obj
from contextweaver.records import Step
from contextweaver.tokens import content_text

ITEM_TYPES = frozenset(
    {"message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
     "custom_tool_call_output", "local_shell_call", "web_search_call"}
)  # fmt: skip


def _is_envelope(value: Any) -> bool:
    """A rollout line {"type", "payload"}; types this reader does not know (newer versions) are skipped."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("type"), str)
        and isinstance(value.get("payload"), dict)
    )


def _is_legacy_header(value: Any) -> bool:
    return isinstance(value, dict) and "id" in value and "timestamp" in value and "type" not in value


EXEC_HEADER = re.compile(
    rf"(?:^|(?<={re.escape(OBSERVATION_SEPARATOR)}))Script \w+[^\n]*\nWall time [^\n]*\nOutput:\n?\n"
)
"""The status part each code-mode `exec` result starts with (at the start of a result): noise to the observation."""


def _without_exec_header(step: Step) -> Step:
    """The step with each `exec` result's leading status part dropped from its observation."""
    if "Wall time" not in step.observation:
        return step
    return dataclasses.replace(step, observation=EXEC_HEADER.sub("", step.observation))


class CodexReader:
    name = "codex"
    expected = "a Codex CLI rollout (JSON Lines of {'type': 'session_meta' | 'response_item' | ..., 'payload': {...}})"
    keys = frozenset({"timestamp", "type", "payload", "id", "instructions"})

    def detect(self, source: Source) -> bool:
        records = record_values(source)
        if not records:
            return False
        values = [r.value for r in records[:50]]
        if all(_is_envelope(v) for v in values):
            return any(v["type"] in ("session_meta", "response_item") for v in values)
        head, rest = values[0], values[1:]
        return (
            _is_legacy_header(head)
            and bool(rest)
            and all(isinstance(v, dict) and (v.get("type") in ITEM_TYPES or "record_type" in v) for v in rest)
        )

    def read(self, source: Source) -> Trajectory:
        records = record_values(source)
        if records is None:
            raise source.error(f"not JSON Lines; expected {self.expected}")
        items: list[dict[str, Any]] = []
        meta: dict[str, Any] = {"compactions": 0}
        for record in records:
            self._line(source, record, items, meta)
        chat = responses.to_chat(items)  # input items before the first model item: the root
        instructions = meta.pop("instructions", None)
        if isinstance(instructions, dict):  # newer headers: {"text": ...}
            instructions = instructions.get("text")
        if (
            isinstance(instructions, str)
            and instructions.strip()
            and not any(content_text(m["content"]).strip() == instructions.strip() for m in chat)
        ):
            chat.insert(0, {"role": "system", "content": instructions})
        root, steps = chat_trajectory(chat)
        steps = [_without_exec_header(step) for step in steps]
        return Trajectory(root=root, steps=steps, source=str(source.path), format=self.name, meta=meta)

    @staticmethod
    def _line(source: Source, record: Record, items: list[dict[str, Any]], meta: dict[str, Any]) -> None:
        value = record.value
        if not isinstance(value, dict):
            raise source.error(f"line {record.line}: expected a JSON object, found {type(value).__name__}")
        kind, payload = value.get("type"), obj(value.get("payload"))
        kind = kind if isinstance(kind, str) else None  # a list or object there is no line type
        if kind == "response_item":
            if not responses.kind_of(payload):
                raise source.error(f"line {record.line}: a response_item whose payload has no 'type'")
            items.append(payload)
        elif kind == "session_meta" or _is_legacy_header(value):
            header = payload if kind == "session_meta" else value
            meta.update({k: header[k] for k in ("id", "cwd", "cli_version", "originator") if k in header})
            meta["instructions"] = header.get("instructions") or header.get("base_instructions")
        elif kind == "turn_context":
            meta.setdefault("model", payload.get("model"))
        elif kind == "compacted":
            meta["compactions"] += 1
            summary = str(payload.get("message") or "")
            items.append(
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": summary}]}
            )
        elif kind in ITEM_TYPES:  # older rollouts: the items themselves, one per line
            items.append(value)


READER = CodexReader()
