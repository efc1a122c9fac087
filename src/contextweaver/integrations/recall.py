"""Recall for agents whose only tool is a shell: `contextweaver recall 12` answered from memory.

The note of a cut tells the agent to type `contextweaver recall N`. Nothing needs to be installed
where the command runs: mini-swe-agent's ContextWeaverAgent answers it before it reaches the
environment (`RecallShell`), and wherever the command did run (SWE-agent's container, a runner
whose agent class is fixed) the feed puts the answer in place of whatever the shell said
(`answered_turn`), so the next context holds the steps asked for either way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from contextweaver.nodes.recall import BadHandle
from contextweaver.records import Message, Step
from contextweaver.tokens import content_text

COMMAND = re.compile(r"\s*contextweaver\s+recall\s+(?P<handle>\d[\d\s,-]*?)(?:\s+--page\s+(?P<page>\d+))?\s*")
MORE = "`contextweaver recall {handle} --page {page}`"
"""How the agent asks for the next page of a long answer."""
TOOL = "contextweaver_recall"
"""The recall tool of the tool-calling integrations (LangChain, the OpenHands SDK)."""
TOOL_HINT = f'the `{TOOL}` tool (steps="N")'
TOOL_MORE = f'`{TOOL}` with steps="{{handle}}", page={{page}}'


def shell_answer(strategy: Any, command: str) -> str | None:
    """The answer to a `contextweaver recall ...` command, None for any other command (or recall off)."""
    match = COMMAND.fullmatch(command or "")
    if match is None or not recalls(strategy):
        return None
    return answer(strategy, match["handle"].strip(), int(match["page"] or 1), MORE)


def recalls(strategy: Any) -> bool:
    """The strategy keeps the steps and names them in its cuts (ContextWeaver with recall on)."""
    config = getattr(strategy, "config", None)
    return callable(getattr(strategy, "recall", None)) and bool(getattr(config, "recall", False))


def answer(strategy: Any, handle: str, page: int, more: str) -> str:
    """The recall's text, or what was wrong with the handle (the agent reads either)."""
    try:
        return str(strategy.recall(handle, page, more).text)
    except BadHandle as exc:
        return f"contextweaver recall: {exc}"


def answered_turn(strategy: Any, step: Step, turn: Sequence[Message]) -> list[Message] | None:
    """The turn with its one output replaced by the recall answer when its action is a recall command
    (the shell that ran it knew nothing of it), else None."""
    answer = shell_answer(strategy, step.action)
    outputs = [i for i, m in enumerate(turn) if i and m.get("role") != "assistant"]
    if answer is None or len(outputs) != 1 or content_text(turn[outputs[0]].get("content")) == answer:
        return None
    out = list(turn)
    out[outputs[0]] = {**turn[outputs[0]], "content": answer}
    return out


class RecallShell:
    """An environment that answers `contextweaver recall ...` itself and passes every other action on."""

    def __init__(self, env: Any, strategy: Callable[[], Any]) -> None:
        self.inner = env
        self._strategy = strategy

    def execute(self, action: dict[str, Any], *args: Any, **kwargs: Any) -> dict[str, Any]:
        answer = shell_answer(self._strategy(), str(action.get("command", "")))
        if answer is None:
            result: dict[str, Any] = self.inner.execute(action, *args, **kwargs)
            return result
        return {"output": answer, "returncode": 0, "exception_info": ""}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
