"""SWE-agent 0.x runs in the nebius/SWE-agent-trajectories layout: one JSON object per run,
{"instance_id", "model_name", "target", "trajectory": [{"role": "system"|"user"|"ai", "text", ...}]}.

The first `system` entry holds the system prompt in `system_prompt`; the first `user` entry is the
task. Each `ai` entry is one step: SWE-agent 0.x puts the command in the last fenced block of the
text and the discussion before it (the thought); the `user` entry after it is the observation.
"""

from __future__ import annotations

import re
from typing import Any

from contextweaver.formats.base import Trajectory
from contextweaver.formats.source import Source
from contextweaver.records import Message, Step

FENCE = re.compile(r"```[^\n]*\n(.*?)\n?```", re.DOTALL)
ROLES = {"system", "user", "ai"}


def _entries(document: Any) -> list[dict[str, Any]] | None:
    if not isinstance(document, dict) or not isinstance(document.get("trajectory"), list):
        return None
    entries = document["trajectory"]
    if not entries or not all(isinstance(e, dict) and e.get("role") in ROLES for e in entries):
        return None
    return entries


def _text(entry: dict[str, Any], key: str = "text") -> str:
    value = entry.get(key)
    return "" if value is None or value == "None" else str(value)


def split_action(text: str) -> tuple[str, str]:
    """(thought, action): the last fenced block is the command, the text before it the thought."""
    matches = list(FENCE.finditer(text))
    if not matches:
        return text.strip(), ""
    last = matches[-1]
    return text[: last.start()].strip(), last.group(1).strip()


class NebiusReader:
    name = "nebius"
    expected = "a nebius SWE-agent run with 'instance_id' and 'trajectory' of {role: system|user|ai, text}"
    keys = frozenset({"instance_id", "model_name", "target", "trajectory", "role", "text", "system_prompt"})

    def detect(self, source: Source) -> bool:
        document = source.document
        return isinstance(document, dict) and "instance_id" in document and _entries(document) is not None

    def read(self, source: Source) -> Trajectory:
        document = source.document
        entries = _entries(document)
        if entries is None or not isinstance(document, dict):
            raise source.error(f"no 'trajectory' list of role/text entries; expected {self.expected}")
        root: list[Message] = []
        position = 0
        for position, entry in enumerate(entries):  # noqa: B007 - position is used after the loop
            if entry["role"] == "ai":
                break
            text = _text(entry, "system_prompt") if entry["role"] == "system" else _text(entry)
            root.append({"role": entry["role"], "content": text or _text(entry)})
        else:
            position = len(entries)
        steps: list[Step] = []
        for index in range(position, len(entries)):
            entry = entries[index]
            if entry["role"] != "ai":
                continue
            following = entries[index + 1] if index + 1 < len(entries) else None
            observation = _text(following) if following is not None and following["role"] == "user" else ""
            thought, action = split_action(_text(entry))
            steps.append(
                Step(
                    thought=thought,
                    action=action,
                    observation=observation,
                    messages=(
                        {"role": "assistant", "content": _text(entry)},
                        {"role": "user", "content": observation},
                    ),
                )
            )
        keys = ("instance_id", "model_name", "target", "exit_status")
        meta = {key: document[key] for key in keys if key in document}
        return Trajectory(root=root, steps=steps, source=str(source.path), format=self.name, meta=meta)


READER = NebiusReader()
