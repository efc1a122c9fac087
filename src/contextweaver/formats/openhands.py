"""OpenHands v0 event streams: a JSON list of events (replay trajectories), or evaluation/resolver
`output.jsonl` records ({"instruction", "history": [...], ...}, one run per line).

Events are actions ({"action": "run", "args": {...}}) and observations ({"observation": "run",
"content": ..., "cause": <action id>}); older records flatten args into the event and pair each
action with the next observation ([action, observation] pairs are accepted too). The first user
message (plus any "system" action) is the root. Agent actions from one model response (same
`tool_call_metadata.model_response.id`) form one Step with their observations; an agent "message"
is a Step with only a thought; a later user message is a Step of kind "user". Environment
bookkeeping (agent_state_changed, null observations, recall) never reached the model and is skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from contextweaver.formats.base import Trajectory
from contextweaver.formats.source import Source, record_values
from contextweaver.formats.toolcalls import Call, action_text, text_of, tool_step
from contextweaver.records import Message, Step

SKIPPED = {
    "agent_state_changed",
    "change_agent_state",
    "null",
    "recall",
    "condensation",
    "agent_think_observation",
}
NOISE_ARGS = {"thought", "impl_source", "translated_ipython_code", "blocking", "hidden", "confirmation_state",
              "is_confirmed", "is_input", "keep_prompt", "action_risk", "security_risk", "kernel_init_code",
              "include_extra", "wait_for_response", "image_urls", "images_urls"}  # fmt: skip


def _dict(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return {}
    return value if isinstance(value, dict) else {}


def _is_event(value: Any) -> bool:
    return isinstance(value, dict) and ("action" in value or "observation" in value) and "role" not in value


def _events(history: Any) -> list[dict[str, Any]] | None:
    """Flatten a history (events, or [action, observation] pairs) into events; None if it is neither."""
    if not isinstance(history, list):
        return None
    events: list[dict[str, Any]] = []
    for item in history:
        if isinstance(item, list) and all(_is_event(e) or e == {} for e in item):
            events.extend(e for e in item if e)
        elif _is_event(item):
            events.append(item)
        else:
            return None
    return events


@dataclass
class _Open:
    """A step being assembled: the model response's calls, in order, waiting for observations."""

    response_id: str | None
    thought: str
    calls: list[Call] = field(default_factory=list)
    assistant: Message | None = None
    ids: list[Any] = field(default_factory=list)


def _key(value: Any) -> Any:
    """An event field used as a key (an id, a cause, an observation's kind) as it can be looked up: damaged
    files hold lists and objects there."""
    return value if isinstance(value, str | int | float | bool | None) else json.dumps(value, default=str)


class OpenHandsReader:
    name = "openhands-v0"
    expected = "an OpenHands v0 event list or output.jsonl record with 'history' (action/observation events)"
    keys = frozenset({"action", "observation", "args", "content", "cause", "id",
                      "source", "message", "extras", "instance_id", "instruction", "history"})  # fmt: skip

    def detect(self, source: Source) -> bool:
        document = source.document
        if isinstance(document, list):
            return bool(document) and _events(document) is not None
        records = record_values(source) or []
        return (
            bool(records)
            and isinstance(records[0].value, dict)
            and bool(_events(records[0].value.get("history")))
        )

    def read(self, source: Source) -> Trajectory:
        return self.read_all(source)[0]

    def read_all(self, source: Source) -> list[Trajectory]:
        document = source.document
        if isinstance(document, list):
            events = _events(document)
            if events is None:
                raise source.error(f"a list that is not OpenHands events; expected {self.expected}")
            return [self._trajectory(source, events, {})]
        runs = []
        for record in record_values(source) or []:
            value = record.value
            events = _events(value.get("history")) if isinstance(value, dict) else None
            if events is None:
                raise source.error(f"line {record.line}: no 'history' event list; expected {self.expected}")
            meta = {k: value[k] for k in ("instance_id", "instruction", "success", "error") if k in value}
            issue = value.get("issue")
            meta["instance_id"] = meta.get("instance_id") or (
                issue.get("number") if isinstance(issue, dict) else None
            )
            meta["line"] = record.line
            runs.append(self._trajectory(source, events, meta))
        if not runs:
            raise source.error(f"no runs; expected {self.expected}")
        return runs

    def _trajectory(self, source: Source, events: list[dict[str, Any]], meta: dict[str, Any]) -> Trajectory:
        root: list[Message] = []
        steps: list[Step] = []
        current: _Open | None = None
        by_id: dict[Any, Call] = {}
        last_call: Call | None = None

        def close() -> None:
            nonlocal current
            if current is not None:
                steps.append(
                    tool_step(current.thought, current.calls, current.assistant, {"event_ids": current.ids})
                )
            current = None

        for event in events:
            if "observation" in event:
                if _key(event["observation"]) in SKIPPED:
                    continue
                call = by_id.get(_key(event.get("cause"))) if event.get("cause") is not None else last_call
                if call is not None and call.observation is None:
                    call.observation = text_of(event.get("content"))
                continue
            name, args = str(event["action"]), _dict(event.get("args")) or event
            source_name = event.get(
                "source", "user" if name == "message" and not steps and not root else "agent"
            )
            if name in SKIPPED or source_name == "environment":
                continue
            if name == "system":
                root.append({"role": "system", "content": text_of(args.get("content"))})
                continue
            if name == "message" and source_name == "user":
                close()
                text = text_of(args.get("content", event.get("message")))
                if not any(m["role"] == "user" for m in root) and not steps:
                    root.append({"role": "user", "content": text})
                else:
                    steps.append(Step(observation=text, kind="user", meta={"event_ids": [event.get("id")]}))
                continue
            metadata = _dict(event.get("tool_call_metadata"))
            response = _dict(metadata.get("model_response"))
            if name == "message":  # the agent talking to the user: a thought, no tool call
                close()
                text = text_of(args.get("content", event.get("message")))
                steps.append(Step(thought=text, meta={"event_ids": [event.get("id")]}))
                continue
            if current is None or not response.get("id") or response.get("id") != current.response_id:
                close()
                current = _Open(
                    response.get("id"), text_of(args.get("thought") or ""), assistant=_assistant(response)
                )
            call = Call(
                id=str(metadata.get("tool_call_id") or f"event-{event.get('id', len(steps))}"),
                name=str(metadata.get("function_name") or name),
                arguments=_arguments(response, metadata.get("tool_call_id"), args),
                action=_action(name, args, response, metadata.get("tool_call_id")),
            )
            current.calls.append(call)
            current.ids.append(event.get("id"))
            by_id[_key(event.get("id"))] = call
            last_call = call
        close()
        if not any(m["role"] == "user" for m in root) and meta.get("instruction"):
            root.append({"role": "user", "content": str(meta["instruction"])})
        return Trajectory(root=root, steps=steps, source=str(source.path), format=self.name, meta=meta)


def _assistant(response: dict[str, Any]) -> Message | None:
    choices = response.get("choices") or []
    message = choices[0].get("message") if choices and isinstance(choices[0], dict) else None
    if not isinstance(message, dict):
        return None
    keep = {"role", "content", "tool_calls"}
    return {key: value for key, value in message.items() if key in keep and value is not None}


def _tool_call(response: dict[str, Any], call_id: Any) -> dict[str, Any]:
    for call in (_assistant(response) or {}).get("tool_calls") or ():
        if isinstance(call, dict) and call.get("id") == call_id:
            return _dict(call.get("function"))
    return {}


def _arguments(response: dict[str, Any], call_id: Any, args: dict[str, Any]) -> str:
    arguments = _tool_call(response, call_id).get("arguments")
    if isinstance(arguments, str):
        return arguments
    return json.dumps(
        {k: v for k, v in args.items() if k not in NOISE_ARGS and k != "action"}, ensure_ascii=False
    )


def _action(name: str, args: dict[str, Any], response: dict[str, Any], call_id: Any) -> str:
    for key in (
        {
            "run": "command",
            "run_ipython": "code",
            "browse": "url",
            "browse_interactive": "browser_actions",
        }.get(name, ""),
    ):
        if key and isinstance(args.get(key), str):
            return str(args[key])
    function = _tool_call(response, call_id)
    if function:
        return action_text(str(function.get("name", name)), function.get("arguments"))
    rest = {
        k: v
        for k, v in args.items()
        if k not in NOISE_ARGS and k != "action" and v not in (None, "", "null", "{}", {})
    }
    return action_text(name, rest)


READER = OpenHandsReader()
