"""Reversible cuts: the steps a cut left out or shortened, read back as the agent saw them.

A cut names each step it leaves out (the working-state note) or shortens (placeholders, trims and
excerpt markers carry `#N`); `recall_steps` answers a handle ("12", "3-5,9") with those steps'
messages byte for byte, each under one line saying what the step was, paged so that one answer
never takes more than about a quarter of the budget it comes back into.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from contextweaver.errors import ContextWeaverError
from contextweaver.records import Message, Node, content_text

HANDLE = re.compile(r"\s*\d+(?:\s*-\s*\d+)?(?:\s*,\s*\d+(?:\s*-\s*\d+)?)*\s*")
"""Steps as the note writes them: `12`, `3-19`, `3-19, 22`."""
MAX_STEPS = 50
"""Most steps one handle may name (a page holds what fits; the rest is asked for page by page)."""
PAGE_SHARE = 1.0
"""Characters per budget token a page holds: about a quarter of the budget in tokens (~4 chars each)."""
MIN_PAGE, NO_BUDGET_PAGE = 2000, 32000
COMMAND_CHARS = 90
ANSWER = re.compile(r"(?m)^(?:\[page \d+ of \d+[^\]\n]*\]\n)?\[step \d+: [^\n]*\]\n--- ")
"""How a recall answer starts (a shell tool may put a line or two of its own first): its outputs are old
ones, never a new test run."""


class BadHandle(ContextWeaverError, ValueError):
    """A recall that names no stored step, or a page past the last."""


@dataclass(frozen=True)
class Recalled:
    """One page of the recalled steps."""

    text: str
    steps: tuple[int, ...]
    page: int
    pages: int


def page_chars(budget: int | None) -> int:
    """Characters one page of a recall holds for a budget (None: no budget)."""
    return NO_BUDGET_PAGE if budget is None else max(MIN_PAGE, int(budget * PAGE_SHARE))


def parse_handle(handle: str | int | Sequence[int], last: int) -> tuple[int, ...]:
    """The steps a handle names, in order, each in 1..`last`."""
    if isinstance(handle, int):
        steps = [handle]
    elif isinstance(handle, str):
        if not HANDLE.fullmatch(handle):
            raise BadHandle(
                f"recall takes step numbers as the context names them (12, 3-5, 3-5,9), not {handle!r}"
            )
        steps = []
        for part in handle.split(","):
            first, _, end = part.partition("-")
            start, stop = int(first), int(end or first)
            if stop - start >= MAX_STEPS:
                raise BadHandle(f"{part.strip()} names more than {MAX_STEPS} steps: ask for fewer at a time")
            steps += range(start, stop + 1)
    else:
        steps = [int(s) for s in handle]
    wrong = [s for s in steps if not 1 <= s <= last]
    if wrong or not steps:
        raise BadHandle(f"no step {wrong[0] if wrong else ''} here: the steps so far are 1-{last}")
    if len(steps) > MAX_STEPS:
        raise BadHandle(
            f"the handle names {len(steps)} steps, more than {MAX_STEPS}: ask for fewer at a time"
        )
    return tuple(dict.fromkeys(steps))


def recall_steps(
    nodes: Sequence[Node],
    handle: str | int | Sequence[int],
    page: int = 1,
    chars: int = NO_BUDGET_PAGE,
    more: str = "",
) -> Recalled:
    """Page `page` of the steps `handle` names; `more` ("... {handle} ... {page}") asks for the next."""
    steps = parse_handle(handle, len(nodes) - 1)
    return recall_of({i: nodes[i] for i in steps}, steps, page, chars, more)


def recall_of(
    nodes: Mapping[int, Node], steps: Sequence[int], page: int, chars: int, more: str = ""
) -> Recalled:
    """Page `page` of `steps` (parsed, each in `nodes`): their texts, with a line saying which page."""
    body = "".join(step_text(nodes[i]) for i in steps)
    pages = _pages(body, chars)
    if not 1 <= page <= len(pages):
        raise BadHandle(f"page {page} of step(s) {_named(steps)}: there are {len(pages)} page(s)")
    text = pages[page - 1]
    if len(pages) > 1:
        ask = more.format(handle=_named(steps), page=page + 1) if more and page < len(pages) else ""
        text = f"[page {page} of {len(pages)}{'; next: ' + ask if ask else ''}]\n{text}"
    return Recalled(text, tuple(steps), page, len(pages))


def is_answer(observation: str) -> bool:
    """The observation is a recall's answer (the old outputs it repeats say nothing of the present)."""
    return bool(ANSWER.search(observation[:400]))


def step_text(node: Node) -> str:
    """One line saying what the step was, then each of its messages as the agent saw it."""
    step = node.step
    parts = [f"[step {node.index}: {_command(node)} | {node.validation_status.value}]\n"]
    for message in step.chat_messages():
        parts.append(f"--- {_label(message)} ---\n{_body(message)}\n")
    return "".join(parts)


def _label(message: Message) -> str:
    role = str(message.get("role", ""))
    return {"assistant": "action", "tool": "output"}.get(role, "output" if role == "user" else role)


def _body(message: Message) -> str:
    """The message's text verbatim, and for a tool call its name and arguments as the model wrote them."""
    text = content_text(message.get("content"))
    for call in message.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            arguments = function.get("arguments", "")
            arguments = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
            text += f"{chr(10) if text else ''}[call {function.get('name', '')}] {arguments}"
    return text


def _command(node: Node) -> str:
    step = node.step
    line = next((ln.strip() for ln in step.action.splitlines() if ln.strip()), "") or step.kind
    return f"`{line[:COMMAND_CHARS]}`" + ("…" if len(line) > COMMAND_CHARS else "")


def _named(steps: Sequence[int]) -> str:
    return ",".join(map(str, steps))


def _pages(body: str, chars: int) -> list[str]:
    """`body` cut into pages of at most `chars` characters, at line ends where a line allows."""
    pages: list[str] = []
    start = 0
    while start < len(body):
        end = min(len(body), start + chars)
        if end < len(body):
            cut = body.rfind("\n", start, end)
            end = cut + 1 if cut > start else end
        pages.append(body[start:end])
        start = end
    return pages or [""]
