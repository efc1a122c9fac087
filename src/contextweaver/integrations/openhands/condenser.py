"""OpenHands SDK condenser: ContextWeaver decides, before each LLM call, which events the agent sees.

    from contextweaver.integrations.openhands import ContextWeaverCondenser
    agent = Agent(llm=llm, tools=tools, condenser=ContextWeaverCondenser(contextweaver={"window": 5}))

With no budget the condenser takes the agent LLM's `max_input_tokens` at the first step (and says so);
an LLM config without it leaves the lazy default passing the history through whole, said as a WARNING.
The agent's tools, sent with every call, count against the budget: the view's SystemPromptEvent records
them, and they are counted in the form the agent LLM is sent them (chat or Responses tools).

`condense(view)` returns a new View (the SDK's event log is never touched): the system prompt and task
first, then every step in order, then the TEST STATUS line and the working-state note as user messages of
their own, each with its own id (after the task they would join the task's message, and every status
change would rewrite message 1, breaking the prompt cache's prefix). A step is one batch (`batches.py`):
kept, compressed or dropped whole, so every tool call keeps exactly its result (its output and thought as
the context shows them); a tool loop is shown whole or not at all (the one holding the newest step is always
shown, its dropped steps as their calls with placeholders; when even those do not fit, its steps are shown
as text in one user message instead: `loop_note.py`). A person's message and a condensation's summary are
always kept. A condensation request (`Conversation.condense()`, a context-window refusal) is answered by
weaving that view again to TIGHTEN of the tokens it was sent with; the views after it are woven to the
budget again, and the events stay in the log, so recall still reads them. A request the condenser cannot
answer (the view holds nothing more to cut) raises the SDK's `NoCondensationAvailableException`, as its own
condensers do, which ends the run: an empty `Condensation` would have the agent resend the refused request
until its iteration limit.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from openhands.sdk.context.condenser.base import CondenserBase, NoCondensationAvailableException
from openhands.sdk.context.view import View
from openhands.sdk.event import (
    ActionEvent,
    Condensation,
    LLMConvertibleEvent,
    MessageEvent,
    ObservationEvent,
    SystemPromptEvent,
)
from openhands.sdk.llm import LLM, TextContent
from openhands.sdk.llm import Message as LLMMessage
from openhands.sdk.tool.schema import Observation
from pydantic import Field, PrivateAttr

from contextweaver.integrations.contexts import align
from contextweaver.integrations.feed import budgeted_context, tool_tokens
from contextweaver.integrations.openhands.batches import Batch, batches_of, event_text, tool_loops
from contextweaver.integrations.openhands.loop_note import NOTE_ROOM, loop_note
from contextweaver.integrations.recall import TOOL, TOOL_HINT, TOOL_MORE, answer, recalls
from contextweaver.integrations.settings import WeavingSettings, announce, build_strategy
from contextweaver.nodes.render import compressed_messages
from contextweaver.protocols import Strategy
from contextweaver.records import Decision, Message, WovenContext
from contextweaver.tokens import content_text, count_message
from contextweaver.weaving.budget import Budget, BudgetError

logger = logging.getLogger(__name__)
NAME = "ContextWeaver (OpenHands condenser)"
TIGHTEN = 0.8
"""A condensation request weaves the refused view again to this share of the tokens it was sent with."""
LOOP_KEPT = (
    "its tool loop is shown whole (the SDK's tool-loop atomicity): call kept, output as its placeholder"
)
LOOP_DROPPED = "dropped with the rest of its tool loop (the SDK's tool-loop atomicity)"
LOOP_AS_TEXT = (
    "shown as text in a user message: its tool loop does not fit whole (the SDK's tool-loop atomicity)"
)


class WovenObservation(Observation):
    """A tool output as the woven context shows it: the placeholder, or its head/tail-trimmed text."""


class ContextWeaverCondenser(CondenserBase):
    """`condenser=` of an OpenHands SDK agent; `contextweaver` holds the usual weaving settings."""

    contextweaver: WeavingSettings = Field(default_factory=WeavingSettings)

    _strategy: Strategy | None = PrivateAttr(default=None)
    _seen: list[str] = PrivateAttr(default_factory=list)
    """Ids of the events already turned into the root or steps (or passed over)."""
    _steps: dict[int, Batch] = PrivateAttr(default_factory=dict)
    _root: list[LLMConvertibleEvent] = PrivateAttr(default_factory=list)
    _last: WovenContext | None = PrivateAttr(default=None)
    _rebuilds: int = PrivateAttr(default=0)
    _condensations: int = PrivateAttr(default=0)
    _budget_from: str | None = PrivateAttr(default=None)
    _window_looked_up: bool = PrivateAttr(default=False)
    _reserved: int = PrivateAttr(default=0)
    _tight: tuple[int, list[str]] | None = PrivateAttr(default=None)
    """The budget a condensation request set, and the ids of the one view it holds for."""

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        later = " unless the agent's LLM config gives max_input_tokens, read at the first step"
        announce(NAME, self.contextweaver, then=later)

    def handles_condensation_requests(self) -> bool:
        return True

    @property
    def budget_from(self) -> str | None:
        """Where the budget came from when none was given (the LLM's max_input_tokens), else None."""
        return self._budget_from

    @property
    def reserved(self) -> int:
        """Tokens of the tool definitions every call sends: off the budget the events are woven to."""
        return self._reserved

    @property
    def rebuilds(self) -> int:
        """How often a changed event prefix made the graph start over."""
        return self._rebuilds

    @property
    def last_context(self) -> WovenContext | None:
        """The last woven context, with the decision and reason for every step."""
        return self._last

    def recall(self, steps: str = "", page: int = 1, query: str = "") -> str:
        """The steps as the model first saw them (the `contextweaver_recall` tool's answer); with `query`,
        the steps the context does not hold whole that best answer it."""
        if not recalls(self._strategy):
            return "contextweaver recall: nothing to recall here (no step was woven, or recall is off)"
        return answer(self._strategy, steps, page, TOOL_MORE, query)

    def _take_window(self, llm: LLM | None) -> None:
        """With no budget given, the agent LLM's `max_input_tokens` becomes the budget (once)."""
        if self._window_looked_up or self.contextweaver.budget is not None:
            return
        self._window_looked_up = True
        window = getattr(llm, "max_input_tokens", None)
        if not isinstance(window, int) or window <= 0:
            announce(NAME, self.contextweaver, then=" (the LLM config has no max_input_tokens)")
            return
        self._budget_from = f"the agent LLM's max_input_tokens, {window:,} tokens"
        object.__setattr__(self, "contextweaver", self.contextweaver.with_budget(window))
        announce(NAME, self.contextweaver, self._budget_from)

    def condense(self, view: View, agent_llm: LLM | None = None) -> View | Condensation:
        if view.unhandled_condensation_request:
            return self._tighten(view, agent_llm)
        self._take_window(agent_llm)
        events = list(view.events)
        root = _root_events(events)
        if root is None:  # the task has not arrived: nothing to weave, and the root is not known yet
            return view
        ids = [e.id for e in events]
        if self._strategy is not None and ids[: len(self._seen)] != self._seen:
            self._strategy, self._seen, self._steps = None, [], {}
            self._rebuilds += 1
        if self._strategy is None:
            self._begin(root, agent_llm)
        pending = self._consume(events[len(self._seen) :])
        budget = self._budget_for(ids)
        context, restore, drop, as_text = self._context(budget)
        woven, over = self._woven(context, restore, drop, as_text)
        self._last = _explained(context, restore, drop, as_text, self._strategy, over)
        room = self._last.budget
        if budget is not None and room is not None and self._last.tokens > room:  # the loop's note ran over
            context, restore, drop, as_text = self._context_beside(budget, over)
            woven, over = self._woven(context, restore, drop, as_text)
            self._last = _explained(context, restore, drop, as_text, self._strategy, over)
        return View(
            events=woven + pending,
            unhandled_condensation_request=view.unhandled_condensation_request,
        )

    def _begin(self, root: list[LLMConvertibleEvent], llm: LLM | None) -> None:
        """A new graph: recall is on when the agent has the recall tool (unless `recall` is set)."""
        settings = self.contextweaver
        tools = _tools(root)
        weaver = settings.weaver
        if "recall" not in weaver.model_fields_set:
            weaver = weaver.model_copy(update={"recall": TOOL in {t.name for t in tools}})
        if weaver.recall and "recall_hint" not in weaver.model_fields_set:
            weaver = weaver.model_copy(update={"recall_hint": TOOL_HINT})
        self._strategy, _ = build_strategy(settings.model_copy(update={"weaver": weaver}))
        self._root = root
        self._reserved = sent_tool_tokens(root, llm)
        self._strategy.begin([{"role": e.to_llm_message().role, "content": event_text(e)} for e in root])
        self._seen = [e.id for e in root]

    def _budget_for(self, ids: list[str]) -> int | None:
        """The budget: a condensation request's, for the view it answered; the configured one for any other."""
        if self._tight is not None and self._tight[1] == ids:
            return self._tight[0]
        self._tight = None
        return self.contextweaver.budget

    def _tighten(self, view: View, llm: LLM | None) -> Condensation:
        """A condensation request: the refused view is woven again to TIGHTEN of the tokens it was sent with (the
        views after it to the budget again). When it cannot shrink, NoCondensationAvailableException ends the
        run, as the SDK's own condensers end it. Nothing is forgotten from the log."""
        self._condensations += 1
        current = view.model_copy(update={"unhandled_condensation_request": False})
        self.condense(current, llm)  # the context the refused request was woven from
        last, strategy = self._last, self._strategy
        if last is None or strategy is None:  # the task has not arrived: the view passes through whole
            raise NoCondensationAvailableException(f"{NAME}: asked to condense before the task arrived")
        safety = strategy.config.token_safety_factor  # type: ignore[attr-defined]
        sent = Budget(0, safety).in_model_tokens(last.tokens) + self._reserved
        target = int(TIGHTEN * sent)
        try:
            self._context(target)
        except BudgetError as exc:
            raise NoCondensationAvailableException(
                f"{NAME}: the LLM refused a request of about {sent:,} tokens as too long, and this view cannot "
                f"be condensed further ({target:,} tokens cannot hold the system prompt, task, tools and newest "
                "step, which are always sent). Use a model with a larger context window, or check the "
                "max_input_tokens of its LLM config"
            ) from exc
        self._tight = (target, [e.id for e in view.events])
        logger.warning(
            "%s: asked to condense, this view is woven again to %s tokens (the budget stays %s); a window "
            "smaller than the budget makes every long view refused once: lower contextweaver.budget to it",
            NAME, f"{target:,}", _tokens(self.contextweaver.budget),
        )  # fmt: skip
        return Condensation(llm_response_id=f"contextweaver-condensation-{self._condensations}")

    def _context(self, budget: int | None) -> tuple[WovenContext, set[int], set[int], list[int]]:
        """The woven context, with the steps to show as placeholders and to drop so that every tool loop is
        shown whole or not at all, and the steps to show as text. The loop of the newest step is always
        shown: when its dropped steps do not fit beside the context, it is woven again with room for all of
        them, and when even that does not fit, its steps the context keeps are shown as text instead (a
        refusal then names a value with room for that message's framing, NOTE_ROOM)."""
        assert self._strategy is not None
        setting = "contextweaver.budget"
        loops = tool_loops(self._steps)
        newest = max(self._steps, default=None)
        current = next((loop for loop in loops if newest in loop), [])
        try:
            context = budgeted_context(self._strategy, budget, self._reserved, setting)
        except BudgetError as exc:
            if not current or exc.need is None or exc.budget is None:
                raise
            room = NOTE_ROOM
            need = replace(exc.need, newest=exc.need.newest + room, newest_full=exc.need.newest_full + room)
            raise BudgetError.of(exc.budget, need) from None
        restore, drop, over = _loop_fixes(context, loops, current, self._strategy)
        if over <= 0 or budget is None:
            return context, restore, drop, []
        nodes = self._strategy.nodes
        room = sum(nodes[i].compressed_tokens for i in current if i != newest)
        whole = Budget(budget, self._strategy.config.token_safety_factor, self._reserved, setting)  # type: ignore[attr-defined]
        try:
            looped = budgeted_context(self._strategy, budget - whole.in_model_tokens(room), self._reserved)
        except BudgetError as exc:
            if exc.need is None:
                raise
            mode = {d.index: d.mode for d in context.decisions}
            older = [loop for loop in loops if loop is not current]
            restore, drop, _ = _loop_fixes(context, older, [], self._strategy)
            return context, restore, drop, [i for i in current if mode[i] != "dropped"]
        restore, drop, _ = _loop_fixes(looped, loops, current, self._strategy)
        return looped, restore, drop, []

    def _context_beside(self, budget: int, over: int) -> tuple[WovenContext, set[int], set[int], list[int]]:
        """The context woven again with room for what the loop's note outweighs its messages by; a refusal
        counts it with the newest step, which the note shows (so the value it names holds the note too)."""
        assert self._strategy is not None
        safety = self._strategy.config.token_safety_factor  # type: ignore[attr-defined]
        whole = Budget(budget, safety, self._reserved, "contextweaver.budget")
        try:
            return self._context(budget - whole.in_model_tokens(over))
        except BudgetError as exc:
            if exc.need is None:
                raise
            need = replace(exc.need, newest=exc.need.newest + over, newest_full=exc.need.newest_full + over)
            raise BudgetError.of(whole, need) from None

    def _consume(self, new: list[LLMConvertibleEvent]) -> list[LLMConvertibleEvent]:
        """Add the complete steps among `new`; return the events left for later (a batch still running)."""
        assert self._strategy is not None
        batches, passed = batches_of(new)
        self._seen.extend(passed)
        for number, batch in enumerate(batches):
            if not batch.complete():
                return [e for b in batches[number:] for e in b.events]
            node = self._strategy.add_step(batch.step())
            self._steps[node.index] = batch
            self._seen.extend(batch.ids)
        return []

    def _woven(
        self, context: WovenContext, restore: set[int], drop: set[int], as_text: list[int]
    ) -> tuple[list[LLMConvertibleEvent], int]:
        """The context as events: kept events verbatim, shortened outputs as WovenObservation, a thought the
        context cut as the woven one, the steps `as_text` in one user message after them (`loop_note.py`);
        and by how many tokens that message outweighs the messages it stands for."""
        assert self._strategy is not None
        nodes = self._strategy.nodes
        sources = list(nodes[0].step.chat_messages())
        owners = [0] * len(sources)
        for decision in context.decisions:
            if decision.mode != "dropped":
                messages = nodes[decision.index].step.chat_messages()
                sources += messages
                owners += [decision.index] * len(messages)
        shown: dict[str, Any] = {}
        thoughts: dict[str, Any] = {}
        woven: dict[int, list[Message]] = {}
        notes: list[LLMConvertibleEvent] = []
        for message, match in zip(context.messages, align(context.messages, sources), strict=True):
            if match is None:  # the TEST STATUS line, the working-state note
                notes.append(_note_event(str(message.get("content")), len(notes)))
                continue
            woven.setdefault(owners[match], []).append(message)
            if message.get("role") == "tool" and message != sources[match]:
                shown[str(message.get("tool_call_id"))] = message.get("content")
            elif message.get("tool_calls") and message != sources[match]:  # its reasoning cut
                thoughts[str(message["tool_calls"][0].get("id"))] = message.get("content")
        for index in restore:
            shown.update(
                {str(m.get("tool_call_id")): m.get("content") for m in compressed_messages(nodes[index])}
            )
        out: list[LLMConvertibleEvent] = list(self._root)
        texts: list[tuple[int, list[Message]]] = []
        for decision in context.decisions:
            index = decision.index
            if (
                index not in self._steps
                or index in drop
                or (decision.mode == "dropped" and index not in restore)
            ):
                continue
            if index in as_text:
                texts.append((index, woven.get(index) or compressed_messages(nodes[index])))
            else:
                out += [_as_shown(event, shown, thoughts) for event in self._steps[index].events]
        over = 0
        if texts:
            loop = next(loop for loop in tool_loops(self._steps) if as_text[0] in loop)
            left_out = [i for i in loop if i not in as_text]
            note = loop_note(texts, left_out, recalls(self._strategy))
            out.append(note)
            replaced = sum(count_message(m) for _, messages in texts for m in messages)
            over = count_message({"role": "user", "content": event_text(note)}) - replaced
        return out + notes, over  # after the last kept event: a new status never rewrites the task's message


def _loop_fixes(
    context: WovenContext, loops: list[list[int]], current: list[int], strategy: Strategy
) -> tuple[set[int], set[int], int]:
    """Steps to show as placeholders, steps to drop, and by how many tokens the restored ones overrun the
    budget. Newest loops first: the current loop is restored; an older one is restored when it fits, else
    its shown steps are dropped."""
    mode = {d.index: d for d in context.decisions}
    nodes = strategy.nodes
    room = (context.budget - context.tokens) if context.budget is not None else float("inf")
    restore: set[int] = set()
    drop: set[int] = set()
    for loop in reversed(loops):
        missing = [i for i in loop if mode[i].mode == "dropped"]
        if not missing or len(missing) == len(loop):
            continue
        cost = sum(nodes[i].compressed_tokens for i in missing)
        if loop is current or cost <= room:
            restore.update(missing)
            room -= cost
        else:
            drop.update(i for i in loop if i not in missing)
            room += sum(mode[i].tokens for i in loop if i not in missing)
    return restore, drop, int(-room) if room < 0 else 0


def _as_shown(
    event: LLMConvertibleEvent, shown: dict[str, Any], thoughts: dict[str, Any]
) -> LLMConvertibleEvent:
    """The event as the context shows it: its output (a placeholder, a trimmed text) or its response's thought
    (its reasoning cut to a marker), when shortened."""
    if isinstance(event, ObservationEvent) and event.tool_call_id in shown:
        observation = WovenObservation(content=[TextContent(text=str(shown[event.tool_call_id]))])
        return event.model_copy(update={"observation": observation, "extended_content": []})
    if isinstance(event, ActionEvent) and event.thought and event.tool_call_id in thoughts:
        text = content_text(thoughts[event.tool_call_id])
        return event.model_copy(update={"thought": [TextContent(text=text)] if text else []})
    return event


def _explained(
    context: WovenContext,
    restore: set[int],
    drop: set[int],
    as_text: list[int],
    strategy: Strategy | None,
    over: int = 0,
) -> WovenContext:
    """The context with the decisions the tool loops changed (`over`: the loop note's tokens beyond the
    messages it stands for)."""
    if not restore and not drop and not as_text or strategy is None:
        return context
    nodes = strategy.nodes
    decisions = []
    for d in context.decisions:
        if d.index in restore:
            d = Decision(d.index, "compressed", LOOP_KEPT, nodes[d.index].compressed_tokens)
        elif d.index in drop:
            d = Decision(d.index, "dropped", LOOP_DROPPED, 0)
        elif d.index in as_text:
            d = Decision(d.index, d.mode, LOOP_AS_TEXT, d.tokens)
        decisions.append(d)
    tokens = (
        context.tokens + sum(d.tokens for d in decisions) - sum(d.tokens for d in context.decisions) + over
    )
    return replace(context, decisions=decisions, tokens=tokens)


def _tokens(budget: int | None) -> str:
    return "unset" if budget is None else f"{budget:,} tokens"


def _root_events(events: list[LLMConvertibleEvent]) -> list[LLMConvertibleEvent] | None:
    """The system prompt and the task, everything before the first step; None while the task has not arrived."""
    root: list[LLMConvertibleEvent] = []
    for event in events:
        if isinstance(event, SystemPromptEvent):
            root.append(event)
        elif isinstance(event, MessageEvent) and event.source == "user":
            return [*root, event]
        else:
            break
    return None


def _tools(root: list[LLMConvertibleEvent]) -> list[Any]:
    return next((e.tools for e in root if isinstance(e, SystemPromptEvent)), [])


def sent_tool_tokens(root: list[LLMConvertibleEvent], llm: LLM | None) -> int:
    """Tokens of the tools the agent sends with every call (its SystemPromptEvent lists them), converted as
    the agent LLM converts them: Responses tools on the Responses API, else chat tools; each with the
    security_risk argument the SDK's Agent always asks for."""
    responses = llm is not None and llm.uses_responses_api()
    return tool_tokens(
        [t.to_responses_tool(True) if responses else t.to_openai_tool(True) for t in _tools(root)]
    )


def _note_event(text: str, number: int) -> MessageEvent:
    """A user message the context adds (TEST STATUS, the working-state note), with an id of its own."""
    return MessageEvent(
        source="user",
        llm_message=LLMMessage(role="user", content=[TextContent(text=text)]),
        id=f"contextweaver-note-{number}",
    )
