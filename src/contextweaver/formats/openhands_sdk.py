"""OpenHands SDK (V1) event streams: events with a `kind` (ActionEvent, ObservationEvent, MessageEvent,
SystemPromptEvent, AgentErrorEvent, ...), either as a JSON list, one event per JSONL line, or inside
evaluation records ({"instance_id", "instruction", "history": [events], ...}, one run per line).

Each ActionEvent carries the tool call the model made (`tool_call`: id, name, arguments) and the
`llm_response_id` of the response it came from; calls of one response form one Step (the SDK's
own batch-atomicity rule) and their ObservationEvents (matched by `tool_call_id`) its observation.
A MessageEvent from the user before any action is the task; a later one is a Step of kind "user".
Without a user message the record's `instruction` becomes the task.
"""

from __future__ import annotations

from typing import Any

from contextweaver.formats.base import Trajectory
from contextweaver.formats.source import Source, record_values
from contextweaver.formats.toolcalls import Call, action_text, arguments_text, obj, text_of, tool_step
from contextweaver.records import Message, Step
from contextweaver.tokens import count_images

OBSERVATION_TEXT_KEYS = ("output", "content", "message", "text", "error", "reason")


def _is_sdk_event(value: Any) -> bool:
    return isinstance(value, dict) and str(value.get("kind", "")).endswith("Event")


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "\n".join(
            text_of(part)
            for part in value
            if not (isinstance(part, dict) and "image" in str(part.get("type")))
        )
    return text_of(value)


def _observation_text(event: dict[str, Any]) -> str:
    observation = event.get("observation")
    if isinstance(observation, dict):
        for key in OBSERVATION_TEXT_KEYS:
            if observation.get(key):
                return _text(observation[key])
        return ""
    return _text(event.get("error") or event.get("rejection_reason") or "")


class OpenHandsSdkReader:
    name = "openhands-sdk"
    expected = "an OpenHands SDK event stream (ActionEvent/ObservationEvent objects), or records with such a 'history'"
    keys = frozenset({"kind", "id", "timestamp", "source", "tool_call",
                      "llm_response_id", "observation", "instance_id", "instruction", "history"})  # fmt: skip

    def detect(self, source: Source) -> bool:
        return bool(self._runs(source))

    def _runs(self, source: Source) -> list[tuple[list[dict[str, Any]], dict[str, Any]]]:
        document = source.document
        if isinstance(document, list):
            return [(document, {})] if document and all(_is_sdk_event(e) for e in document) else []
        records = record_values(source) or []
        if records and all(_is_sdk_event(r.value) for r in records):
            return [([r.value for r in records], {})]
        runs = []
        for record in records:
            value = record.value
            history = value.get("history") if isinstance(value, dict) else None
            if not isinstance(history, list) or not all(_is_sdk_event(e) for e in history):
                return []
            meta = {k: value[k] for k in ("instance_id", "instruction", "test_result", "error") if k in value}
            runs.append((history, {**meta, "line": record.line}))
        return runs

    def read(self, source: Source) -> Trajectory:
        return self.read_all(source)[0]

    def read_all(self, source: Source) -> list[Trajectory]:
        runs = self._runs(source)
        if not runs:
            raise source.error(f"no OpenHands SDK events; expected {self.expected}")
        return [self._trajectory(source, events, meta) for events, meta in runs]

    def _trajectory(self, source: Source, events: list[dict[str, Any]], meta: dict[str, Any]) -> Trajectory:
        root: list[Message] = []
        results = {
            e.get("tool_call_id"): e
            for e in events
            if e.get("kind") in ("ObservationEvent", "AgentErrorEvent", "UserRejectObservation")
        }
        steps: list[Step] = []
        batch: list[dict[str, Any]] = []

        def close() -> None:
            if batch:
                steps.append(self._step(batch, results))
                batch.clear()

        for event in events:
            kind = event.get("kind")
            if kind == "SystemPromptEvent":
                root.append({"role": "system", "content": _text(event.get("system_prompt"))})
            elif kind == "MessageEvent":
                close()
                message = obj(event.get("llm_message"))
                text = _text(message.get("content"))
                if event.get("source") == "user" and not steps and not any(m["role"] == "user" for m in root):
                    root.append({"role": "user", "content": text})
                elif event.get("source") == "user":
                    steps.append(Step(observation=text, kind="user", meta={"event_ids": [event.get("id")]}))
                else:
                    steps.append(Step(thought=text, meta={"event_ids": [event.get("id")]}))
            elif kind == "ActionEvent":
                if batch and batch[-1].get("llm_response_id") != event.get("llm_response_id"):
                    close()
                batch.append(event)
        close()
        if not any(m["role"] == "user" for m in root) and meta.get("instruction"):
            root.append({"role": "user", "content": str(meta["instruction"])})
        return Trajectory(root=root, steps=steps, source=str(source.path), format=self.name, meta=meta)

    @staticmethod
    def _step(batch: list[dict[str, Any]], results: dict[Any, dict[str, Any]]) -> Step:
        calls = []
        for event in batch:
            tool_call = obj(event.get("tool_call"))
            call_id = str(event.get("tool_call_id") or tool_call.get("id") or event.get("id"))
            name = str(event.get("tool_name") or tool_call.get("name") or "")
            action = obj(event.get("action"))
            arguments = tool_call.get("arguments", {k: v for k, v in action.items() if k != "kind"})
            result = results.get(call_id)
            observation = _observation_text(result) if result is not None else None
            images = count_images((result or {}).get("observation", {}).get("content")) if result else 0
            calls.append(
                Call(
                    call_id,
                    name,
                    arguments_text(arguments),
                    action_text(name, arguments),
                    observation,
                    images,
                )
            )
        first = batch[0]
        thought = "\n".join(
            _text(first.get(key)) for key in ("reasoning_content", "thought") if first.get(key)
        ).strip()
        if not thought:
            thought = "\n".join(
                str(e["action"].get("thought", "")) for e in batch if isinstance(e.get("action"), dict)
            ).strip()
        return tool_step(
            thought,
            calls,
            meta={"event_ids": [e.get("id") for e in batch], "llm_response_id": first.get("llm_response_id")},
        )


READER = OpenHandsSdkReader()
