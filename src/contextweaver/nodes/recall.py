"""Reversible cuts: the steps a cut left out or shortened, read back as the agent saw them.

A cut names each step it leaves out (the working-state note) or shortens (placeholders, trims and
excerpt markers carry `#N`); `recall_steps` answers a handle ("12", "3-5,9") with those steps'
messages byte for byte, each under one line saying what the step was, paged so that one answer
never takes more than a quarter of the room the next context has for steps: the budget less the tool
definitions sent beside the messages and the root, which every context keeps whole.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from contextweaver.errors import ContextWeaverError
from contextweaver.records import Message, Node, content_text
from contextweaver.tokens import count_text

HANDLE = re.compile(r"\s*\d+(?:\s*-\s*\d+)?(?:\s*,\s*\d+(?:\s*-\s*\d+)?)*\s*")
"""Steps as the note writes them: `12`, `3-19`, `3-19, 22`."""
MAX_STEPS = 50
"""Most steps one handle may name (a page holds what fits; the rest is asked for page by page)."""
PAGE_SHARE = 0.25
"""Of the room a budget leaves for steps (`page_tokens`), the most one page takes: the answer comes back as
the newest step, which the next context then holds whole beside the note and the steps the agent works from."""
MIN_PAGE, NO_BUDGET_PAGE = 500, 8000
"""o200k tokens of a page when the room is tiny, and without a budget."""
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


def page_tokens(messages: float | None, root: int) -> int:
    """o200k tokens one page of a recall holds: a share of what the messages may take (`Budget.messages`,
    the budget less the tool definitions sent beside them) less the `root` (system prompt and task), which
    every context keeps whole; a page sized from the budget alone would be trimmed by the next weave when
    the tools are large."""
    if messages is None:
        return NO_BUDGET_PAGE
    return max(MIN_PAGE, int(PAGE_SHARE * (messages - root)))


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
    tokens: int = NO_BUDGET_PAGE,
    more: str = "",
) -> Recalled:
    """Page `page` (of at most `tokens` each) of the steps `handle` names; `more` ("... {handle} ...
    {page}") asks for the next."""
    steps = parse_handle(handle, len(nodes) - 1)
    return recall_of({i: nodes[i] for i in steps}, steps, page, tokens, more)


def recall_of(
    nodes: Mapping[int, Node], steps: Sequence[int], page: int, tokens: int, more: str = ""
) -> Recalled:
    """Page `page` of `steps` (parsed, each in `nodes`): their texts, with a line saying which page."""
    body = "".join(step_text(nodes[i]) for i in steps)
    pages = _pages(body, tokens)
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


def step_text(node: Node, actions: bool = True) -> str:
    """One line saying what the step was, then each of its messages as the agent saw it (without
    `actions`, only its outputs: the line already names the command, as a search answer shows it)."""
    step = node.step
    parts = [f"[step {node.index}: {_command(node)} | {node.validation_status.value}]\n"]
    for message in step.chat_messages():
        if actions or message.get("role") != "assistant":
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


def _pages(body: str, tokens: int) -> list[str]:
    """`body` cut into pages of about `tokens` each (its lines' counts), at line ends where a line allows."""
    pages: list[str] = []
    page: list[str] = []
    used = 0
    for line in body.splitlines(keepends=True):
        for piece in _pieces(line, tokens):
            size = count_text(piece)
            if page and used + size > tokens:
                pages.append("".join(page))
                page, used = [], 0
            page.append(piece)
            used += size
    return [*pages, "".join(page)] if page else pages or [""]


def _pieces(line: str, tokens: int) -> list[str]:
    """A line longer than a page, cut into pieces of `tokens` characters (a token is at least one)."""
    if len(line) <= tokens:
        return [line]
    return [line[i : i + tokens] for i in range(0, len(line), tokens)]
