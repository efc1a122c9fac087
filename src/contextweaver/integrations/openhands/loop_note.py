"""The newest tool loop as text, for when it does not fit whole: one user message after the context.

With thinking on the first response of a turn only (Claude without interleaved thinking), a whole turn is one
tool loop, which the SDK sends whole or not at all (`ToolLoopAtomicityProperty`): a long turn outgrows any
budget once even its calls' placeholders do not fit beside the newest step. The SDK's own summarizing
condenser then has nothing it may forget inside the loop and resets the context to an LLM summary of
everything after the system prompt, the task included. Here the loop's events leave the view and its steps,
as woven under the budget (the newest in full or trimmed, others as placeholders, the rest left out), come
back as text in one user message: the task stays verbatim, the newest output is read as before, no LLM is
called, and recall still reads every step. The model answers the message with a new response, which opens a
new turn (a new loop, with its own thinking block)."""

from __future__ import annotations

from collections.abc import Sequence

from openhands.sdk.event import MessageEvent
from openhands.sdk.llm import Message as LLMMessage
from openhands.sdk.llm import TextContent

from contextweaver.formats.toolcalls import action_text
from contextweaver.integrations.recall import TOOL
from contextweaver.records import Message
from contextweaver.tokens import content_text, count_message

NOTE_ID = "contextweaver-tool-loop-as-text"


def loop_note(
    steps: Sequence[tuple[int, Sequence[Message]]], left_out: Sequence[int], recall: bool
) -> MessageEvent:
    """`steps` (step number, its chat messages as the context shows them) as one user message; `left_out`
    names the loop's steps the budget has no room for."""
    parts = [_head(left_out, recall), *(_step_text(number, messages) for number, messages in steps)]
    return MessageEvent(
        source="user",
        llm_message=LLMMessage(role="user", content=[TextContent(text="\n\n".join(parts))]),
        id=NOTE_ID,
    )


def _head(left_out: Sequence[int], recall: bool) -> str:
    head = "[contextweaver] Your calls since the last message, as text: together they do not fit the context."
    if left_out:
        where = f"; {TOOL} reads them" if recall else ""
        head += f" {len(left_out)} left out (#{min(left_out)} to #{max(left_out)}{where})."
    return head


def _step_text(number: int, messages: Sequence[Message]) -> str:
    lines = [f"#{number}"]
    for message in messages:
        text = content_text(message.get("content"))
        if message.get("role") == "tool":
            lines.append(f"output:\n{text}")
            continue
        lines += [text] if text else []
        for call in message.get("tool_calls") or ():
            name, arguments = call["function"]["name"], call["function"]["arguments"]
            lines.append(f"call {name}: {action_text(name, arguments)}")
    return "\n".join(lines)


NOTE_ROOM = count_message({"role": "user", "content": _head(range(100_000, 999_999), True)})
"""Tokens of the note's framing at its longest: what a refusal names leaves room for it (a step's text is about
as long as its messages, and the condenser weaves again when the note still runs over)."""
