"""SWE-agent `.traj` files (0.x and 1.x): {"trajectory": [...], "history": [...], "info": {...}}.

`trajectory` is SWE-agent's own record of each step (thought, action, raw observation); it gives
the Steps. `history` is the chat the model saw (observations wrapped with "(Open file: ...)"
footers, tool calls in function-calling configs, `message_type` tags in 1.x); it gives the root
(everything before the first assistant message: system prompt, demonstrations, task) and each
step's messages, matched to trajectory entries by action text because the two lists can drift
apart (a rejected edit may appear in one and not the other; unmatched steps carry no messages).
A file with only `history` (1.x function-calling demos) is read from the history alone. A tool
result's `tool_call_ids` list gains the OpenAI `tool_call_id` key when it names a single call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from contextweaver.formats.base import Trajectory
from contextweaver.formats.source import Source
from contextweaver.formats.toolcalls import OBSERVATION_SEPARATOR, obj
from contextweaver.records import Message, Step
from contextweaver.tokens import content_text, count_images


def _chat(message: Message) -> Message:
    ids = message.get("tool_call_ids")
    if (
        message.get("role") == "tool"
        and "tool_call_id" not in message
        and isinstance(ids, list)
        and len(ids) == 1
    ):
        return {**message, "tool_call_id": ids[0]}
    return dict(message)


def _is_history(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(m, dict) and "role" in m for m in value)


def _is_trajectory(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(e, dict) and "action" in e for e in value)


class SweAgentReader:
    name = "swe-agent"
    expected = (
        "a SWE-agent .traj with 'trajectory' (thought/action/observation) and/or 'history' (chat with roles)"
    )
    keys = frozenset({"trajectory", "history", "info", "environment", "replay_config"})

    def detect(self, source: Source) -> bool:
        document = source.document
        if not isinstance(document, dict):
            return False
        trajectory, history = document.get("trajectory"), document.get("history")
        if _is_trajectory(trajectory) and trajectory and (history is None or _is_history(history)):
            return True
        return (
            isinstance(history, list)
            and _is_history(history)
            and any("message_type" in m or "agent" in m for m in history)
        )

    def read(self, source: Source) -> Trajectory:
        document = source.document
        if not isinstance(document, dict):
            raise source.error(f"not a JSON object; expected {self.expected}")
        history = document.get("history") or []
        entries = document.get("trajectory") or []
        if not _is_history(history) and history:
            raise source.error("'history' must be a list of chat messages with 'role'")
        if not _is_trajectory(entries):
            raise source.error("'trajectory' must be a list of objects with 'action'")
        first = next((i for i, m in enumerate(history) if m.get("role") == "assistant"), len(history))
        root = [_chat(m) for m in history[:first]]
        turns = self._turns(history[first:])
        steps = self._from_entries(entries, turns) if entries else [history_step(t) for t in turns]
        info = obj(document.get("info"))
        meta = {"info": {k: v for k, v in info.items() if k in ("exit_status", "submission", "model_stats")}}
        return Trajectory(root=root, steps=steps, source=str(source.path), format=self.name, meta=meta)

    @staticmethod
    def _turns(messages: list[Message]) -> list[list[Message]]:
        """Each assistant message with the messages after it, up to the next assistant message."""
        turns: list[list[Message]] = []
        for message in messages:
            if message.get("role") == "assistant" or not turns:
                turns.append([])
            turns[-1].append(message)
        return turns

    def _from_entries(self, entries: list[dict[str, Any]], turns: list[list[Message]]) -> list[Step]:
        steps, cursor = [], 0
        for position, entry in enumerate(entries):
            action = str(entry.get("action") or "")
            match = next(
                (
                    i
                    for i in range(cursor, min(cursor + 3, len(turns)))
                    if _action_of(turns[i]) == action.strip()
                ),
                None,
            )
            turn = turns[match] if match is not None else []
            if match is not None:
                cursor = match + 1
            steps.append(
                Step(
                    thought=str(entry.get("thought") or ""),
                    action=action.strip(),
                    observation=str(entry.get("observation") or ""),
                    messages=tuple(_chat(m) for m in turn),
                    images=sum(count_images(m.get("content")) for m in turn[1:]),
                    meta={"entry": position, "state": entry.get("state")},
                )
            )
        return steps


def _action_of(turn: Sequence[Message]) -> str:
    head = turn[0] if turn else {}
    return str(head.get("action") or "").strip() if head.get("role") == "assistant" else ""


def history_step(turn: Sequence[Message]) -> Step:
    """One assistant history item and the items after it as a Step (its `thought`/`action` keys first)."""
    head, observations = turn[0], turn[1:]
    if head.get("role") != "assistant":
        observations = turn
    thought = (
        str(head.get("thought") or content_text(head.get("content")))
        if head.get("role") == "assistant"
        else ""
    )
    return Step(
        thought=thought,
        action=_action_of(turn),
        observation=OBSERVATION_SEPARATOR.join(content_text(m.get("content")) for m in observations),
        messages=tuple(_chat(m) for m in turn),
        images=sum(count_images(m.get("content")) for m in observations),
    )


READER = SweAgentReader()
