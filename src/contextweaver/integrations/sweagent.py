"""A SWE-agent-style history processor: `history -> history`, ContextWeaver instead of the last-N window.

SWE-agent applies its configured processors, in order, to the agent's history before every model
query; each is a pydantic model chosen by `type`. This one has `type: contextweaver` and the usual
weaving settings. It returns items of the same shape it receives (all keys kept): steps kept in
full are the original items, compressed observations get SWE-agent's own placeholder, and a
TEST STATUS item (tagged `keep_output`) follows the task. SWE-agent itself is not needed to use it:

    processor = ContextWeaverHistoryProcessor(window=5, budget=100_000)  # or strategy="cw-paper"
    messages = processor(history)

SWE-agent does not tell a history processor its model, so the budget is yours to set: without one the
lazy default passes the history through whole (it says so at construction, as a logging WARNING).
The tool definitions the model is sent with every call (function calling) count against the budget:
loaded from SWE-agent's config after `register()`, the processor reads them from the agent's `tools:`;
built in Python, pass them as `tools=agent_config.tools.tools`. Unknown, it says so at the first call.

State is kept per conversation (keyed by the system prompt and task), and only the items added
since the previous call are fed to its ContextWeaver; a changed prefix rebuilds that conversation.

SWE-agent's `cache_control` processor (in its default config) marks the last user/tool items in place
and clears older marks. Listed before this one, its marks would stay on the steps kept here and pile up
(Anthropic accepts 4 per request); so marks are never stored, and the woven list gets as many as the
history had, on its own last items of the same roles. Either order sends the marks cache_control sets.
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, Union

from pydantic import AfterValidator, Field, PrivateAttr, ValidationInfo

from contextweaver.formats.sweagent import history_step
from contextweaver.integrations import missing_framework
from contextweaver.integrations.feed import ChatFeed, ChatShape, tool_tokens
from contextweaver.integrations.settings import WeavingSettings, announce, announce_uncounted_tools
from contextweaver.records import Message, Step, WovenContext

HistoryItem = dict[str, Any]
_NAME = "ContextWeaver (SWE-agent history processor)"
_NO_MODEL = " (SWE-agent does not tell a history processor its model, so the budget is yours to set)"
_NO_TOOLS = (
    "load the config after contextweaver.integrations.sweagent.register() (the processor then reads the "
    "agent's `tools:`), or pass tools=agent_config.tools.tools (tools=[] when the parser is not function calling)"
)
SWE_AGENT_INSTALL = (
    "SWE-agent is not on PyPI: clone its repository and run `pip install -e .` in it, in this Python"
)
STATUS_TAGS = ["keep_output", "contextweaver_status"]


def starts_turn(item: HistoryItem) -> bool:
    """A model response of this run (demonstrations are part of the root)."""
    return item.get("role") == "assistant" and not item.get("is_demo", False)


def history_turn_step(turn: Sequence[HistoryItem], position: int) -> Step:
    step = history_step(turn)
    return Step(
        thought=step.thought,
        action=step.action,
        observation=step.observation,
        messages=step.messages,
        images=step.images,
        meta={"message_index": position},
    )


SWE_AGENT = ChatShape(starts_turn=starts_turn, turn_step=history_turn_step, keep=dict)


def conversation_key(history: Sequence[HistoryItem]) -> str:
    """The root's fingerprint (system prompt, demonstrations, task): one state per conversation."""
    end = next((i for i, item in enumerate(history) if starts_turn(item)), len(history))
    root = [(item.get("role"), item.get("content")) for item in history[:end]]
    return hashlib.sha256(json.dumps(root, sort_keys=True, default=str).encode()).hexdigest()


class ContextWeaverHistoryProcessor(WeavingSettings):
    """SWE-agent history processor `type: contextweaver` (settings as in every integration)."""

    type: Literal["contextweaver"] = "contextweaver"
    """Selects this processor in a `history_processors` list, like SWE-agent's own types."""
    max_conversations: int = Field(default=16, ge=1, description="conversations whose state is kept")
    tools: list[dict[str, Any]] | None = Field(default=None, exclude=True)
    """The tool definitions the model is sent with every call, off the budget (None: not known). Not
    saved with the settings: SWE-agent's config gives them again when it is loaded."""

    _feeds: OrderedDict[str, ChatFeed] = PrivateAttr(default_factory=OrderedDict)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _last: WovenContext | None = PrivateAttr(default=None)

    def model_post_init(self, context: Any, /) -> None:
        """Say at start what it will do (once per process: SWE-agent copies the processor per agent)."""
        super().model_post_init(context)
        announce(_NAME, self, then=_NO_MODEL)

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> ContextWeaverHistoryProcessor:
        """A copy with the same settings and fresh state (SWE-agent deep-copies its config per agent)."""
        return type(self).model_validate(self._settings())

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its settings: the per-conversation state and its lock stay in this process."""
        return (type(self).model_validate, (self._settings(),))

    def _settings(self) -> dict[str, Any]:
        """What a copy is built from: the settings given, and the tools when known."""
        tools = {} if self.tools is None else {"tools": copy.deepcopy(self.tools)}
        return {**self.model_dump(exclude_unset=True), **tools}

    def __call__(self, history: list[HistoryItem]) -> list[HistoryItem]:
        if not history:
            return []
        marked = [item for item in history if cache_marker(item) is not None]
        plain = without_marks(history, marked)
        key = conversation_key(plain)
        with self._lock:
            feed = self._feeds.pop(key, None) or self._new_feed()
            feed.reserved = tool_tokens(self.tools)
            self._feeds[key] = feed  # most recently used last
            while len(self._feeds) > self.max_conversations:
                self._feeds.popitem(last=False)
            feed.update(plain)
            context = feed.context()
            self._last = context
        out = [
            _added_item(m, history, context) if set(m) <= {"role", "content"} else m for m in context.messages
        ]
        return remarked(out, marked) if marked else out

    def _new_feed(self) -> ChatFeed:
        if self.tools is None:
            announce_uncounted_tools(_NAME, self, _NO_TOOLS)
        return ChatFeed(self, SWE_AGENT)

    def feed_for(self, history: Sequence[HistoryItem]) -> ChatFeed | None:
        """The state kept for this conversation (for inspection and tests)."""
        marked = [item for item in history if cache_marker(item) is not None]
        return self._feeds.get(conversation_key(without_marks(history, marked)))

    @property
    def last_context(self) -> WovenContext | None:
        """The last woven context, with the decision and reason for every step."""
        return self._last


def _added_item(message: Message, history: Sequence[HistoryItem], context: WovenContext) -> HistoryItem:
    """A message the context adds (the TEST STATUS line, the working-state note; a history item has more keys)
    as a history item of SWE-agent's shape: `message_type` is required (`sweagent/types.py`), and the TEST
    STATUS item is tagged so that a later processor keeps its output."""
    item: HistoryItem = {**message, "message_type": "observation"}
    if context.test_status and message.get("content") == context.test_status:
        item["tags"] = list(STATUS_TAGS)
    if "agent" in history[0]:
        item["agent"] = history[0]["agent"]
    return item


CACHE_KEY = "cache_control"
TAGGED_ROLES = {"user", "tool"}
"""The roles SWE-agent's cache_control marks by default (`tagged_roles`): a woven user item it never saw
(the working-state note, TEST STATUS) would get its mark."""


def cache_marker(item: HistoryItem) -> tuple[bool, Any] | None:
    """(on the item itself, the marker) for a prompt-cache mark on the item or a content part, else None."""
    if CACHE_KEY in item:
        return True, item[CACHE_KEY]
    content = item.get("content")
    for part in content if isinstance(content, list) else ():
        if isinstance(part, dict) and CACHE_KEY in part:
            return False, part[CACHE_KEY]
    return None


def without_marks(history: Sequence[HistoryItem], marked: Sequence[HistoryItem]) -> Sequence[HistoryItem]:
    """The history with its marked items replaced by unmarked copies (the others are the same objects)."""
    if not marked:
        return history
    ids = {id(item) for item in marked}
    return [unmarked(item) if id(item) in ids else item for item in history]


def unmarked(item: HistoryItem) -> HistoryItem:
    """A copy of the item without its cache marks (only marked items are copied: a handful per call)."""
    out = {key: value for key, value in item.items() if key != CACHE_KEY}
    content = out.get("content")
    if isinstance(content, list):
        out["content"] = [
            {k: v for k, v in part.items() if k != CACHE_KEY} if isinstance(part, dict) else part
            for part in content
        ]
    return out


def remarked(out: list[HistoryItem], marked: Sequence[HistoryItem]) -> list[HistoryItem]:
    """The woven list with the history's marks moved onto its own last user, tool (or other marked) items: as many,
    the newest mark on the newest such item, each as the history carried it (on the item or its text)."""
    roles = {item.get("role") for item in marked} | TAGGED_ROLES  # the note and TEST STATUS are user items
    targets = [i for i, item in enumerate(out) if item.get("role") in roles][-len(marked) :]
    for position, source in zip(reversed(targets), reversed(marked), strict=False):
        on_item, marker = cache_marker(source) or (True, None)
        item = dict(out[position])
        if on_item:
            item[CACHE_KEY] = marker
        else:
            content = item.get("content")
            parts = list(content) if isinstance(content, list) else [{"type": "text", "text": content or ""}]
            parts[0] = {**parts[0], CACHE_KEY: marker} if isinstance(parts[0], dict) else parts[0]
            item["content"] = parts
        out[position] = item
    return out


HistoryProcessorFactory = Callable[[dict[str, Any]], Callable[[list[HistoryItem]], list[HistoryItem]]]


def history_processor(entry: dict[str, Any]) -> Callable[[list[HistoryItem]], list[HistoryItem]]:
    """Build one processor from its config entry, selected by `type` as in SWE-agent's YAML.

    `type: contextweaver` is ours; any other type is SWE-agent's own (needs `pip install sweagent`).
    """
    if entry.get("type") == "contextweaver":
        return ContextWeaverHistoryProcessor.model_validate(entry)
    try:
        from pydantic import TypeAdapter
        from sweagent.agent.history_processors import HistoryProcessor
    except ImportError:
        raise ValueError(
            f"history processor type {entry.get('type')!r} is SWE-agent's: install SWE-agent "
            f"({SWE_AGENT_INSTALL}), or use type 'contextweaver' (strategy: sliding_window gives the "
            "last-N window)"
        ) from None
    processor: Callable[[list[HistoryItem]], list[HistoryItem]] = TypeAdapter(
        HistoryProcessor
    ).validate_python(entry)
    return processor


def history_processors(
    entries: list[dict[str, Any]],
) -> list[Callable[[list[HistoryItem]], list[HistoryItem]]]:
    """A `history_processors:` list from YAML, applied in order by `apply_processors`."""
    return [history_processor(entry) for entry in entries]


def apply_processors(
    processors: Sequence[Callable[[list[HistoryItem]], list[HistoryItem]]], history: list[HistoryItem]
) -> list[HistoryItem]:
    """What SWE-agent does before each query: each processor's output feeds the next."""
    for processor in processors:
        history = processor(history)
    return history


def tell_tools(processors: list[Any], info: ValidationInfo) -> list[Any]:
    """Give our processors in an agent config the tools its model is sent: SWE-agent's LiteLLM model sends
    `tools.tools` when the parser is function calling (`tools` is validated first, so it is in the data)."""
    tool_config = info.data.get("tools")
    if tool_config is None:
        return processors
    sent = list(tool_config.tools) if tool_config.use_function_calling else []
    for processor in processors:
        if isinstance(processor, ContextWeaverHistoryProcessor) and processor.tools is None:
            processor.tools = sent
    return processors


def register() -> None:
    """Make `type: contextweaver` valid in SWE-agent's config files, in this process.

    SWE-agent's `history_processors` field is a closed union of its own processor types, chosen by
    `type`. This adds ours to that union and rebuilds the config models that contain it, so the
    YAML is validated by SWE-agent's own parser, and each agent config tells our processors its tools.
    Idempotent; needs SWE-agent importable.
    """
    import typing

    from pydantic import BaseModel

    try:
        from sweagent.agent import agents
        from sweagent.agent import history_processors as swe
    except ImportError as exc:
        raise missing_framework(__name__ + ".register", "SWE-agent", SWE_AGENT_INSTALL, exc) from exc

    union = typing.get_args(swe.HistoryProcessor)
    members = typing.get_args(union[0]) if union else ()
    if ContextWeaverHistoryProcessor in members:
        return
    choices: Any = Union.__getitem__((*members, ContextWeaverHistoryProcessor))
    extended: Any = Annotated[choices, Field(discriminator="type")]
    swe.HistoryProcessor = extended
    configs: list[type[BaseModel]] = [agents.DefaultAgentConfig, agents.ShellAgentConfig]
    for config in configs:
        field = config.model_fields["history_processors"]
        field.annotation = list[extended]
        field.metadata.append(AfterValidator(tell_tools))
    from sweagent.run.run_batch import RunBatchConfig
    from sweagent.run.run_single import RunSingleConfig

    for config in (*configs, agents.RetryAgentConfig, RunSingleConfig, RunBatchConfig):
        config.model_rebuild(force=True)


def main(argv: list[str] | None = None) -> None:
    """`python -m contextweaver.integrations.sweagent run --config my.yaml ...`: SWE-agent's own
    command line, with `type: contextweaver` accepted in `agent.history_processors`."""
    try:
        register()
    except ModuleNotFoundError as exc:  # a message and exit status 1, not a traceback
        raise SystemExit(str(exc)) from None
    from sweagent.run.run import main as sweagent_main

    sweagent_main(argv)


if __name__ == "__main__":  # run as a script: use the importable module's class, not __main__'s
    from contextweaver.integrations.sweagent import main as _main

    _main()
