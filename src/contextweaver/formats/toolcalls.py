"""Build a Step from one model response's tool calls and their results, keeping the pairing.

`chat_step(turn)` is the one builder for chat-shaped tool calling (an assistant message with
`tool_calls`, then one `tool` message per call): every reader, integration and proxy wire format
that holds such messages turns them into Steps through it. `tool_step(thought, calls)` builds the
same shape from calls and results recorded separately.

Event-stream formats (OpenHands v0 and SDK) record calls and results as separate events; the LLM
saw them as an assistant message with `tool_calls` followed by one `tool` message per call. One
response's calls form one Step, so compression can never split a call from its result. When a
call has no recorded result (the run stopped, or `finish` needs none) the step carries no messages
(weaving then synthesizes a plain text pair) and says so in `meta["unpaired_tool_calls"]`: a
provider rejects an assistant message whose tool calls lack results.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from contextweaver.records import Message, Step
from contextweaver.tokens import content_text, count_images

OBSERVATION_SEPARATOR = "\n\n"
"""Between the outputs of several tool calls (or observation messages) of one step."""


def message_list(document: Any) -> list[Any] | None:
    """The chat messages of a document: a bare JSON list, or the list under {"messages": [...]}."""
    if isinstance(document, dict):
        messages = document.get("messages")
        return messages if isinstance(messages, list) else None
    return document if isinstance(document, list) else None


@dataclass
class Call:
    """One tool call: its id and name, the source's arguments, the action text, and its result."""

    id: str
    name: str
    arguments: str
    action: str
    observation: str | None = None
    images: int = 0


def arguments_text(arguments: Any) -> str:
    if arguments is None:
        return ""
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def action_text(name: str, arguments: Any) -> str:
    """The action as a reader sees it: a shell command or code verbatim, otherwise `name {json}`.

    Codex's code mode (one freeform `exec` tool whose input is JavaScript calling nested tools) is
    read as the commands and patches the script runs, one per line, so views, edits and test runs
    are found as for a direct call; the script itself when it calls none.
    """
    if name == "exec" and isinstance(arguments, str) and not arguments.lstrip().startswith("{"):
        return "\n".join(code_mode_actions(arguments)) or arguments
    parsed = arguments
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except (ValueError, RecursionError):  # deep nesting is not a command
            parsed = None
    if isinstance(parsed, dict):
        cmd = parsed.get("cmd")  # Codex's exec_command
        shell = _shell_command(parsed.get("command")) or (cmd if isinstance(cmd, str) else "")
        if shell.strip():
            return shell
        for key in ("command", "code"):
            value = parsed.get(key)
            if (
                isinstance(value, str)
                and value.strip()
                and len(parsed) <= 3
                and name not in ("str_replace_editor", "file_editor")
            ):
                return value
    text = arguments_text(arguments)
    return f"{name} {text}".strip() if text not in ("", "{}") else name


def _shell_command(command: Any) -> str:
    """An argv list (Codex's shell tool) as the command line it runs: `bash -lc X` is X."""
    if not isinstance(command, list) or not command or not all(isinstance(a, str) for a in command):
        return ""
    if (
        len(command) == 3
        and command[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh")
        and command[1] in ("-c", "-lc")
    ):
        return command[2]
    return shlex.join(command)


_NESTED_CALL = re.compile(r"\btools\s*\.\s*(exec_command|apply_patch)\s*\(\s*")
_KEY = {"exec_command": re.compile(r"""(?:\bcmd|(["'])cmd\1)\s*:\s*"""),
        "apply_patch": re.compile(r"""(?:\b(?:input|patch)|(["'])(?:input|patch)\1)\s*:\s*""")}  # fmt: skip
_KEY_REACH = 2000
"""How far into a call's `{...}` argument its `cmd` / `input` key is looked for (keeps the scan linear)."""
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0", "\n": ""}


def code_mode_actions(source: str) -> list[str]:
    """The commands (`tools.exec_command({cmd})`, or a bare string) and patches (`tools.apply_patch(text)`,
    as `apply_patch PATCH`) a Codex code-mode script calls, in order; a call whose argument is not a
    literal is left out.

    One left-to-right scan that resumes after each literal read (a call written inside a patch is
    not a call); linear time, never raises.
    """
    found: list[str] = []
    position = 0
    while (call := _NESTED_CALL.search(source, position)) is not None:
        start = call.end()
        if source.startswith("{", start):  # {cmd: ...} / {input: ...}: the key's value
            key = _KEY[call.group(1)].search(source, start, min(len(source), start + _KEY_REACH))
            start = key.end() if key else start
        value, position = _literal(source, start)
        if value is not None and value.strip():  # a patch reads as a direct apply_patch call does
            found.append(f"apply_patch {value}" if call.group(1) == "apply_patch" else value)
        if position < 0:  # an unterminated string runs to the end: nothing after it is code
            break
        position = max(position, call.end())
    return found


def _literal(source: str, start: int) -> tuple[str | None, int]:
    """The JS string (or array of strings, as a command line) at `start`, and where it ends:
    (None, start) when there is none, (None, -1) when a string is never closed."""
    if not source.startswith("[", start):
        return _string(source, start)
    words: list[str] = []
    position = start + 1
    while True:
        while position < len(source) and source[position] in " \t\r\n,":
            position += 1
        if source.startswith("]", position):
            return _shell_command(words) or None, position + 1
        word, after = _string(source, position)
        if word is None:
            return None, after if after < 0 else start
        words.append(word)
        position = after


def _string(source: str, start: int) -> tuple[str | None, int]:
    """A quoted JS string literal at `start` (JSON-style escapes) and the index after it."""
    if start >= len(source) or source[start] not in "\"'`":
        return None, start
    quote, position = source[start], start + 1
    out: list[str] = []
    while position < len(source):
        char = source[position]
        if char == quote:
            return "".join(out), position + 1
        if char == "\\" and position + 1 < len(source):
            escaped = source[position + 1]
            position += 2
            digits = {"u": 4, "x": 2}.get(escaped, 0)
            code = source[position : position + digits]
            if digits and len(code) == digits and all(c in "0123456789abcdefABCDEF" for c in code):
                out.append(chr(int(code, 16)))
                position += digits
            else:
                out.append(_ESCAPES.get(escaped, escaped))
            continue
        out.append(char)
        position += 1
    return None, -1


def tool_step(
    thought: str,
    calls: list[Call],
    assistant: Message | None = None,
    meta: dict[str, Any] | None = None,
) -> Step:
    """A Step whose messages are the assistant message + one `tool` result per call, in call order."""
    meta = dict(meta or {})
    observation = OBSERVATION_SEPARATOR.join(c.observation for c in calls if c.observation is not None)
    action = "\n".join(c.action for c in calls if c.action)
    unpaired = [c.id for c in calls if c.observation is None]
    messages: tuple[Message, ...] = ()
    if calls and not unpaired:
        if assistant is None or not _same_calls(assistant, calls):
            assistant = {
                "role": "assistant",
                "content": thought or None,
                "tool_calls": [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                    for c in calls
                ],
            }
        results = [
            {"role": "tool", "tool_call_id": c.id, "name": c.name, "content": c.observation} for c in calls
        ]
        messages = (assistant, *results)
    elif unpaired:
        meta["unpaired_tool_calls"] = unpaired
    return Step(
        thought=thought,
        action=action,
        observation=observation,
        messages=messages,
        images=sum(c.images for c in calls),
        meta=meta,
    )


def chat_step(turn: Sequence[Message]) -> Step:
    """One assistant message and the `tool` results after it as a Step, the messages kept verbatim.

    Action = each call as `name {arguments}` (a shell `command` argument verbatim); observation =
    the results' text in call order. Results answering no call of the message are kept and listed
    in meta["orphan_results"]; calls without a result in meta["unpaired_tool_calls"]. A turn that
    does not start with an assistant message is all observation.
    """
    head, rest = (
        (turn[0], list(turn[1:])) if turn and turn[0].get("role") == "assistant" else ({}, list(turn))
    )
    calls = [c for c in head.get("tool_calls") or () if isinstance(c, dict)]
    order = {c.get("id"): i for i, c in enumerate(calls)}
    results = sorted(rest, key=lambda m: order.get(m.get("tool_call_id"), len(order)))
    meta: dict[str, Any] = {}
    orphans = [m.get("tool_call_id") for m in rest if m.get("tool_call_id") not in order]
    if orphans:
        meta["orphan_results"] = orphans
    answered = {m.get("tool_call_id") for m in rest}
    missing = [c.get("id") for c in calls if c.get("id") not in answered]
    if missing:
        meta["unpaired_tool_calls"] = missing
    action = "\n".join(_call_action(obj(c.get("function"))) for c in calls)
    if not calls and isinstance(head.get("function_call"), dict):  # the legacy single function_call
        action = _call_action(head["function_call"])
    return Step(
        thought=thought_text(head.get("content")),
        action=action,
        observation=OBSERVATION_SEPARATOR.join(content_text(m.get("content")) for m in results),
        messages=tuple(turn),
        images=sum(count_images(m.get("content")) for m in rest),
        meta=meta,
    )


def thought_text(content: Any) -> str:
    """The assistant's reasoning and text, in order: Anthropic `thinking` blocks count as thought."""
    if not isinstance(content, list):
        return content_text(content)
    parts = [
        str(p.get("thinking") if p.get("type") == "thinking" else p.get("text", ""))
        for p in content
        if isinstance(p, dict) and p.get("type") in ("text", "thinking")
    ]
    return "\n".join(part for part in parts if part)


def _call_action(function: dict[str, Any]) -> str:
    name = str(function.get("name", ""))
    arguments = function.get("arguments")
    return name if arguments is None else action_text(name, arguments)


def _same_calls(assistant: Message, calls: list[Call]) -> bool:
    ids = [c.get("id") for c in assistant.get("tool_calls") or () if isinstance(c, dict)]
    return ids == [c.id for c in calls]


def obj(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else {} (recorded fields are often null or missing)."""
    return value if isinstance(value, dict) else {}


def text_of(value: Any) -> str:
    """Text of a content value: a string, a list of text parts, or a {"text": ...} part."""
    if isinstance(value, dict) and "text" in value:
        return str(value["text"])
    return content_text(value)
