"""LangChain v1 / LangGraph: weave the agent's messages before each model call; the state keeps them all.

    from contextweaver.integrations.langgraph import ContextWeaverMiddleware, ContextWeaverHook
    agent = create_agent(model, tools, middleware=[ContextWeaverMiddleware(window=5)])   # langchain v1
    agent = create_react_agent(model, tools, pre_model_hook=ContextWeaverHook(window=5, budget=100_000))

With no budget the middleware takes the chat model's context window (its `profile`'s max_input_tokens)
at the first call and says so; the hook is not given the model, so its budget is yours to set (without
one the lazy default passes the history through whole, which it says at construction).
The tool definitions sent with every call count against the budget: the middleware reads them from the
model request; the hook sees only the state, so give it the agent's tools, `ContextWeaverHook(tools=tools)`
(without them it says at construction that they are not counted).

Recall: placeholders and trims name their step, and the note points at the `contextweaver_recall`
tool, which returns a step as the model first saw it. The middleware registers the tool itself; with the
hook, add `hook.recall_tool` to the agent's tools. `recall: false` (under `weaver:`) turns both off.

The middleware rewrites only the model request (`wrap_model_call`), the hook returns
`llm_input_messages`: the graph's `messages` state stays the full, unwoven history. Messages of the
history are turned into steps once (an AI message and its tool results form one step, so a call
never loses its result); each woven message is the original LangChain message, or a copy whose
content is the placeholder or the trimmed output. One state per conversation (keyed by its first
messages), fed only the messages added since the previous call.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Annotated, Any

from pydantic import Field, PrivateAttr, field_validator

from contextweaver.integrations import missing_framework

try:
    from langchain.agents.middleware import AgentMiddleware, ModelRequest
    from langchain_core.messages import AnyMessage, BaseMessage, HumanMessage, convert_to_openai_messages
    from langchain_core.tools import tool
    from langgraph.prebuilt import InjectedState
except ImportError as exc:
    raise missing_framework(
        __name__,
        "LangChain v1 (and LangGraph for the hook)",
        "pip install 'langchain>=1.0' 'langgraph>=1.0'",
        exc,
    ) from exc

from contextweaver.formats.toolcalls import chat_step
from contextweaver.integrations.contexts import align
from contextweaver.integrations.feed import ChatFeed, ChatShape, tool_tokens
from contextweaver.integrations.recall import TOOL, TOOL_HINT, TOOL_MORE, answer, recalls
from contextweaver.integrations.settings import WeavingSettings, announce, announce_uncounted_tools
from contextweaver.records import Message, Step, WovenContext

_HOOK = "ContextWeaver (LangGraph pre_model_hook)"
_HOOK_NO_MODEL = " (a pre_model_hook is not given the model, so the budget is yours to set)"
_HOOK_NO_TOOLS = (
    "a pre_model_hook sees only the state: pass the agent's tools, ContextWeaverHook(tools=tools, ...)"
)
_MIDDLEWARE_LATER = " unless the chat model's `profile` gives its context window, read at the first call"


def profile_window(model: Any) -> int | None:
    """`max_input_tokens` of a LangChain chat model's profile (None when it has none)."""
    profile = getattr(model, "profile", None)
    window = profile.get("max_input_tokens") if isinstance(profile, dict) else None
    return window if isinstance(window, int) and window > 0 else None


def tool_call_step(turn: Sequence[Message], position: int) -> Step:
    step = chat_step(turn)
    return replace(step, meta={**step.meta, "message_index": position})


CHAT = ChatShape(turn_step=tool_call_step, keep=dict)
"""OpenAI chat messages: an assistant message and the tool results after it form one step."""


class _Conversation:
    """One conversation's feed and the chat form of each LangChain message, converted once."""

    def __init__(self, settings: WeavingSettings) -> None:
        self.feed = ChatFeed(settings, CHAT)
        self.originals: list[BaseMessage] = []
        self.chat: list[Message] = []

    def weave(self, messages: Sequence[BaseMessage]) -> tuple[list[BaseMessage], WovenContext]:
        same = 0
        while same < min(len(messages), len(self.originals)) and messages[same] is self.originals[same]:
            same += 1
        del self.originals[same:], self.chat[same:]
        self.originals.extend(messages[same:])
        self.chat.extend(_chat(m) for m in messages[same:])
        self.feed.update(self.chat)
        context = self.feed.context()
        sources = self.feed.sources(context)
        woven: list[BaseMessage] = []
        for message, match in zip(
            context.messages, align(context.messages, [m for _, m in sources]), strict=True
        ):
            position = sources[match][0] if match is not None else None
            if position is None:  # the TEST STATUS line
                woven.append(
                    HumanMessage(content=str(message.get("content")), id="contextweaver-test-status")
                )
            elif message == self.chat[position]:
                woven.append(self.originals[position])
            else:
                woven.append(self.originals[position].model_copy(update={"content": message.get("content")}))
        return woven, context


def _chat(message: BaseMessage) -> Message:
    converted: Message = convert_to_openai_messages(message)
    return converted


class MessageWeaver(WeavingSettings):
    """Weaving settings plus the state of each conversation they weave (shared by hook and middleware)."""

    max_conversations: int = Field(default=16, ge=1, description="conversations whose state is kept")

    _conversations: OrderedDict[str, _Conversation] = PrivateAttr(default_factory=OrderedDict)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _last: WovenContext | None = PrivateAttr(default=None)
    _tools_key: tuple[int, ...] = PrivateAttr(default=())
    _tools_tokens: int = PrivateAttr(default=0)
    _current: _Conversation | None = PrivateAttr(default=None)
    """The conversation woven last: a recall without the agent's state reads this one."""

    def model_post_init(self, context: Any, /) -> None:
        """With recall on, the note points at the recall tool (unless the settings name another way)."""
        super().model_post_init(context)
        if self.weaver.recall and "recall_hint" not in self.weaver.model_fields_set:
            self.weaver = self.weaver.model_copy(update={"recall_hint": TOOL_HINT})

    @property
    def recall_tool(self) -> Any:
        """The `contextweaver_recall` tool for these conversations (add it to the agent's tools)."""
        return _recall_tool(self)

    def recall(
        self, steps: str = "", page: int = 1, messages: Sequence[BaseMessage] | None = None, query: str = ""
    ) -> str:
        """The steps as the model first saw them, from the conversation of `messages` (else the last); with
        `query`, the steps the context does not hold whole that best answer it."""
        conversation = self.conversation(messages) if messages else None
        conversation = conversation or self._current
        strategy = conversation.feed.strategy if conversation is not None else None
        if not recalls(strategy):
            return "contextweaver recall: nothing to recall here (no step was woven, or recall is off)"
        return answer(strategy, steps, page, TOOL_MORE, query)

    @property
    def last_context(self) -> WovenContext | None:
        """The last woven context, with the decision and reason for every step."""
        return self._last

    def conversation(self, messages: Sequence[BaseMessage]) -> _Conversation | None:
        return self._conversations.get(_key(messages))

    def weave(self, messages: Sequence[BaseMessage], tools: Sequence[Any] = ()) -> list[BaseMessage]:
        """The woven messages; `tools`, sent with every call, count against the budget."""
        if not messages:
            return []
        key = _key(messages)
        with self._lock:
            conversation = self._conversations.pop(key, None) or _Conversation(self)
            conversation.feed.reserved = self._tool_tokens(tools)
            self._conversations[key] = conversation
            while len(self._conversations) > self.max_conversations:
                self._conversations.popitem(last=False)
            woven, self._last = conversation.weave(messages)
            self._current = conversation
        return woven

    def _tool_tokens(self, tools: Sequence[Any]) -> int:
        """The tools' tokens as the model is sent them (OpenAI tool schemas), converted once per set."""
        key = tuple(id(tool) for tool in tools)
        if key != self._tools_key:
            from langchain_core.utils.function_calling import convert_to_openai_tool

            self._tools_key = key
            self._tools_tokens = tool_tokens([convert_to_openai_tool(tool) for tool in tools])
        return self._tools_tokens


def _key(messages: Sequence[BaseMessage]) -> str:
    """The conversation's fingerprint: its messages before the first AI message (system, task)."""
    root = []
    for message in messages:
        if message.type == "ai":
            break
        root.append([message.type, message.content])
    return hashlib.sha256(json.dumps(root, sort_keys=True, default=str).encode()).hexdigest()


def _recall_tool(weaver: MessageWeaver) -> Any:
    def contextweaver_recall(
        steps: str = "", page: int = 1, query: str = "", state: Annotated[Any, InjectedState] = None
    ) -> str:
        """Read again, as you first saw them, steps the context left out or shortened (the context names
        them `#N`). steps: "12", "3-5" or "3-5,9"; page: the next page of a long answer; query: instead of
        steps, words of what you look for (an error, a file, a command): the best matching records."""
        messages = state.get("messages") if isinstance(state, dict) else getattr(state, "messages", None)
        return weaver.recall(steps, page, messages, query)

    return tool(TOOL)(contextweaver_recall)


class ContextWeaverHook(MessageWeaver):
    """LangGraph `pre_model_hook`: returns the woven messages as `llm_input_messages`."""

    tools: list[Any] | None = Field(default=None, exclude=True)
    """The agent's tools (the list or ToolNode `create_react_agent` is given): the model is sent their
    definitions with every call, so they count against the budget. None: not counted."""

    @field_validator("tools", mode="before")
    @classmethod
    def _tool_node_tools(cls, tools: Any) -> Any:
        """A ToolNode (create_react_agent takes one too) holds its tools by name."""
        by_name = getattr(tools, "tools_by_name", None)
        return list(by_name.values()) if isinstance(by_name, dict) else tools

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        announce(_HOOK, self, then=_HOOK_NO_MODEL)
        if self.tools is None:
            announce_uncounted_tools(_HOOK, self, _HOOK_NO_TOOLS)

    def __call__(self, state: Any) -> dict[str, list[BaseMessage]]:
        messages = state["messages"] if isinstance(state, dict) else state.messages
        return {"llm_input_messages": self.weave(messages, self.tools or ())}


class ContextWeaverMiddleware(AgentMiddleware):
    """LangChain v1 agent middleware: the model request carries the woven messages."""

    def __init__(self, **settings: Any) -> None:
        super().__init__()
        self.weaver = MessageWeaver.model_validate(settings)
        self.tools = [self.weaver.recall_tool] if self.weaver.weaver.recall else []
        """The recall tool, registered with the agent by `create_agent`."""
        self.budget_from: str | None = None
        """Where the budget came from when none was given (the chat model's profile), else None."""
        self._window_looked_up = self.weaver.budget is not None
        announce("ContextWeaver (LangChain middleware)", self.weaver, then=_MIDDLEWARE_LATER)

    @property
    def last_context(self) -> WovenContext | None:
        return self.weaver.last_context

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        self._take_window(request.model)
        return handler(request.override(messages=self._woven(request.messages, request.tools)))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[Any]]
    ) -> Any:
        self._take_window(request.model)
        return await handler(request.override(messages=self._woven(request.messages, request.tools)))

    def _take_window(self, model: Any) -> None:
        """With no budget given, the first call's chat model's context window becomes the budget."""
        if self._window_looked_up:
            return
        self._window_looked_up = True
        window = profile_window(model)
        if window is None:
            announce(
                "ContextWeaver (LangChain middleware)",
                self.weaver,
                then=" (the model's profile has no max_input_tokens)",
            )
            return
        self.weaver.weaver = self.weaver.weaver.model_copy(update={"budget": window})
        self.budget_from = f"the context window of the chat model's profile, {window:,} tokens"
        announce("ContextWeaver (LangChain middleware)", self.weaver, self.budget_from)

    def _woven(self, messages: list[AnyMessage], tools: Sequence[Any] = ()) -> list[AnyMessage]:
        woven: list[AnyMessage] = self.weaver.weave(messages, tools)  # type: ignore[assignment]
        return woven
