"""A SWE-agent-style history processor: `history -> history`, ContextWeaver instead of the last-N window.

SWE-agent applies its configured processors, in order, to the agent's history before every model
query; each is a pydantic model chosen by `type`. This one has `type: contextweaver` and the usual
weaving settings. It returns items of the same shape it receives (all keys kept): steps kept in
full are the original items, compressed observations get SWE-agent's own placeholder, and a
TEST STATUS item (tagged `keep_output`) follows the task. SWE-agent itself is not needed to use it:

    processor = ContextWeaverHistoryProcessor(window=5, budget=100_000)  # or strategy="cw-ancestry"
    messages = processor(history)

SWE-agent does not tell a history processor its model, so the budget is yours to set: without one the
lazy default passes the history through whole (it says so at construction, as a logging WARNING).

State is kept per conversation (keyed by the system prompt and task), and only the items added
since the previous call are fed to its ContextWeaver; a changed prefix rebuilds that conversation.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, Union

from pydantic import Field, PrivateAttr

from contextweaver.formats.sweagent import history_step
from contextweaver.integrations import missing_framework
from contextweaver.integrations.feed import ChatFeed, ChatShape
from contextweaver.integrations.settings import WeavingSettings, announce
from contextweaver.types import Message, Step, WovenContext

HistoryItem = dict[str, Any]
_NO_MODEL = " (SWE-agent does not tell a history processor its model, so the budget is yours to set)"
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

    _feeds: OrderedDict[str, ChatFeed] = PrivateAttr(default_factory=OrderedDict)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _last: WovenContext | None = PrivateAttr(default=None)

    def model_post_init(self, context: Any, /) -> None:
        """Say at start what it will do (once per process: SWE-agent copies the processor per agent)."""
        super().model_post_init(context)
        announce("ContextWeaver (SWE-agent history processor)", self, then=_NO_MODEL)

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> ContextWeaverHistoryProcessor:
        """A copy with the same settings and fresh state (SWE-agent deep-copies its config per agent)."""
        return type(self).model_validate(self.model_dump(exclude_unset=True))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its settings: the per-conversation state and its lock stay in this process."""
        return (type(self).model_validate, (self.model_dump(exclude_unset=True),))

    def __call__(self, history: list[HistoryItem]) -> list[HistoryItem]:
        if not history:
            return []
        key = conversation_key(history)
        with self._lock:
            feed = self._feeds.pop(key, None) or ChatFeed(self, SWE_AGENT)
            self._feeds[key] = feed  # most recently used last
            while len(self._feeds) > self.max_conversations:
                self._feeds.popitem(last=False)
            feed.update(history)
            context = feed.context()
            self._last = context
        return [self._status_item(m, history) if _is_status(m, context) else m for m in context.messages]

    def feed_for(self, history: Sequence[HistoryItem]) -> ChatFeed | None:
        """The state kept for this conversation (for inspection and tests)."""
        return self._feeds.get(conversation_key(history))

    @property
    def last_context(self) -> WovenContext | None:
        """The last woven context, with the decision and reason for every step."""
        return self._last

    @staticmethod
    def _status_item(message: Message, history: Sequence[HistoryItem]) -> HistoryItem:
        item: HistoryItem = {**message, "message_type": "observation", "tags": list(STATUS_TAGS)}
        if "agent" in history[0]:
            item["agent"] = history[0]["agent"]
        return item


def _is_status(message: Message, context: WovenContext) -> bool:
    return bool(context.test_status) and message.get("content") == context.test_status and len(message) == 2


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


def register() -> None:
    """Make `type: contextweaver` valid in SWE-agent's config files, in this process.

    SWE-agent's `history_processors` field is a closed union of its own processor types, chosen by
    `type`. This adds ours to that union and rebuilds the config models that contain it, so the
    YAML is validated by SWE-agent's own parser. Idempotent; needs SWE-agent importable.
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
        config.model_fields["history_processors"].annotation = list[extended]
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
