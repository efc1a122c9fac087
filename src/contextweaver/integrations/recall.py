"""Recall for agents whose only tool is a shell: `contextweaver recall 12` answered from memory.

The note of a cut tells the agent to type `contextweaver recall N`, or `contextweaver recall "words"` to
search what the cut left out by what it looks for (`ContextWeaver.recall(query=...)`). Nothing needs to be installed
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
from contextweaver.nodes.recall_query import BadQuery
from contextweaver.records import Message, Step
from contextweaver.tokens import content_text

COMMAND = re.compile(r"\s*contextweaver\s+recall\s+(?P<handle>\d[\d\s,-]*?)(?:\s+--page\s+(?P<page>\d+))?\s*")
QUERY = re.compile(r"\s*contextweaver\s+recall\s+(?P<query>\S.*?)\s*", re.DOTALL)
"""The query form: anything after `recall` that is not a handle, quotes around it dropped."""
MORE = "`contextweaver recall {handle} --page {page}`"
"""How the agent asks for the next page of a long answer."""
TOOL = "contextweaver_recall"
"""The recall tool of the tool-calling integrations (LangChain, the OpenHands SDK)."""
TOOL_HINT = f'the `{TOOL}` tool (steps="N"; query="words" searches what was cut)'
TOOL_MORE = f'`{TOOL}` with steps="{{handle}}", page={{page}}'


def shell_answer(strategy: Any, command: str) -> str | None:
    """The answer to a `contextweaver recall ...` command, None for any other command (or recall off)."""
    match = COMMAND.fullmatch(command or "")
    if match is not None and recalls(strategy):
        return answer(strategy, match["handle"].strip(), int(match["page"] or 1), MORE)
    found = QUERY.fullmatch(command or "")
    if found is None or not recalls(strategy) or _compound(found["query"]):
        return None
    return answer(strategy, "", 1, MORE, query=_unquoted(found["query"]))


def recalls(strategy: Any) -> bool:
    """The strategy keeps the steps and names them in its cuts (ContextWeaver with recall on)."""
    config = getattr(strategy, "config", None)
    return callable(getattr(strategy, "recall", None)) and bool(getattr(config, "recall", False))


def answer(strategy: Any, handle: str, page: int, more: str, query: str = "") -> str:
    """The recall's text (by `query` when one is given), or what was wrong with the handle or the query
    (the agent reads either)."""
    try:
        if query.strip():
            return str(strategy.recall(query=query).text)
        return str(strategy.recall(handle, page, more).text)
    except (BadHandle, BadQuery) as exc:
        return f"contextweaver recall: {exc}"


def _compound(query: str) -> bool:
    """The words after `recall` are more than one shell command (a pipe, a list, a redirection): the
    shell's to run, not a query."""
    quoted = query.strip()
    if len(quoted) > 1 and quoted[0] == quoted[-1] and quoted[0] in "'\"" and quoted[0] not in quoted[1:-1]:
        return False
    return "\n" in quoted or any(mark in quoted for mark in ("|", ";", "&", ">", "<", "$(", "`"))


def _unquoted(query: str) -> str:
    query = query.strip()
    if len(query) > 1 and query[0] == query[-1] and query[0] in "'\"":
        return query[1:-1]
    return query


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
