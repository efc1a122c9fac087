"""Properties every woven message list must have; checked in tests and available to integrations."""

from __future__ import annotations

from collections.abc import Sequence

from contextweaver.records import Message


def unpaired_tool_calls(messages: Sequence[Message]) -> list[str]:
    """Tool-call ids without exactly one result right after their call (providers reject these)."""
    problems = []
    pending: list[str] = []
    for message in messages:
        if message.get("role") == "tool":
            call_id = message.get("tool_call_id")
            if call_id in pending:
                pending.remove(call_id)
            else:
                problems.append(f"result {call_id} has no pending call")
            continue
        if pending:
            problems.extend(f"call {c} has no result" for c in pending)
            pending = []
        pending = [c.get("id") for c in message.get("tool_calls") or ()]
    problems.extend(f"call {c} has no result" for c in pending)
    return problems


def missing_verbatim(messages: Sequence[Message], required: Sequence[Message]) -> list[Message]:
    """Messages (system prompt, task, a person's messages) that must appear unchanged but do not."""
    return [m for m in required if m not in messages]
