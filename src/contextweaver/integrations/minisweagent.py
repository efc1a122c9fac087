"""mini-swe-agent drop-in: weave the agent's messages with ContextWeaver before every model query.

Two ways in, both configured from mini-swe-agent's YAML:

- `agent_class: contextweaver.integrations.minisweagent.ContextWeaverAgent` with an
  `agent.contextweaver:` block (strategy, window, max_parents, analyzer, budget). The trajectory
  file keeps the full, unwoven history; the graph and the woven contexts are saved beside it.
- `model_class: contextweaver.integrations.minisweagent.WeavingModel` (with `wrapped_model_class`
  and a `model.contextweaver:` block) for runners whose agent class is fixed (`mini-extra swebench`):
  the same weaving, with a summary in the trajectory's `info.contextweaver`.

With no `budget`, the model's context window is taken from litellm's model info when the model class has
imported litellm and litellm knows the model (said at start, recorded as `budget_from`); otherwise the
lazy default passes the history through whole, which it says at start as a logging WARNING.

The agent keeps its messages; only the list sent to the model is woven. One ContextWeaver lives
per run and is fed only the turns added since the previous query.
"""

from __future__ import annotations

import inspect
import json
import logging
import sys
import time
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, create_model

from contextweaver.integrations import missing_framework

try:
    from minisweagent.agents import get_agent_class
    from minisweagent.agents.default import AgentConfig, DefaultAgent
    from minisweagent.models import get_model_class
except ImportError as exc:
    raise missing_framework(__name__, "mini-swe-agent 2", "pip install 'mini-swe-agent>=2.4'", exc) from exc

from contextweaver.formats.minisweagent import RESPONSES_API, responses_api_item
from contextweaver.integrations.feed import ChatFeed, tool_tokens
from contextweaver.integrations.recall import RecallShell
from contextweaver.integrations.record import ContextLog, graph_document, sidecar_paths
from contextweaver.integrations.settings import (
    WeavingSettings,
    announce,
    describe,
    litellm_window,
    memory_usage,
)
from contextweaver.records import Message, WovenContext

log = logging.getLogger("contextweaver.integrations")


_NO_WINDOW = " (litellm, when installed and imported by the model class, gives a known model's window)"


def _speaks_responses_api(model: Any) -> bool:
    """mini-swe-agent's Responses-API model classes (litellm_response, openrouter_response, ...)."""
    names = [f"{k.__module__}.{k.__name__}" for k in type(model).__mro__]
    return any("response_model" in name or "ResponseAPI" in name for name in names)


def sent_tools(model: Any) -> list[Any]:
    """The tool definitions the model class sends with every call: mini-swe-agent's tool-calling classes
    pass their module's `BASH_TOOL` from `_query` (litellm, openrouter, portkey, requesty; a text-based
    subclass overrides `_query` and sends none); a `tools` list attribute wins."""
    tools = getattr(model, "tools", None)
    if isinstance(tools, list):
        return tools
    sender = next(
        (k for k in type(model).__mro__ if "_query" in vars(k)), type(model)
    )  # the class that calls
    tool = getattr(sys.modules.get(sender.__module__), "BASH_TOOL", None)
    return [tool] if isinstance(tool, dict) else []


class WeavingModel:
    """A mini-swe-agent Model that sends the woven context instead of the whole message list."""

    def __init__(
        self,
        *,
        model: Any = None,
        contextweaver: WeavingSettings | dict[str, Any] | None = None,
        wrapped_model_class: str = "",
        **model_kwargs: Any,
    ) -> None:
        """Wrap `model`, or build the mini-swe-agent model `wrapped_model_class` from `model_kwargs`."""
        if model is None:
            model = get_model_class(model_kwargs.get("model_name", ""), wrapped_model_class)(**model_kwargs)
        if _speaks_responses_api(model):
            raise ValueError(
                f"model class {type(model).__module__}.{type(model).__name__} sends {RESPONSES_API}"
            )
        self.inner = model
        self.config = model.config
        """The wrapped model's config (mini-swe-agent reads `model.config.model_name`)."""
        settings = WeavingSettings.model_validate(contextweaver or {})
        name = str(getattr(model.config, "model_name", "") or "")
        window = litellm_window(name) if settings.budget is None else None
        self.budget_from = (
            f"the context window of {name}, {window:,} tokens (litellm's model info)" if window else None
        )
        """Where the budget came from when the config set none (None: the config's, or no budget)."""
        self.settings = settings.with_budget(window)
        announce("ContextWeaver (mini-swe-agent)", self.settings, self.budget_from, _NO_WINDOW)
        self.feed = ChatFeed(self.settings)
        self.feed.reserved = tool_tokens(sent_tools(model))
        self.log = ContextLog(with_messages=self.settings.record_messages)
        self.keep_records = False
        """True when someone (ContextWeaverAgent.save) writes the full records to disk."""
        self.last_context: WovenContext | None = None
        self.failures = 0

    def reset(self) -> None:
        """Forget the conversation (a new run starts)."""
        self.feed.reset()
        self.log.reset()
        self.last_context = None

    def weave(self, messages: list[Message]) -> list[Message]:
        """The messages to send: the woven context, or the full list if the memory failed (logged, counted)."""
        started = time.perf_counter()
        if any(responses_api_item(m) for m in messages[-3:]):
            raise ValueError(f"the agent's messages are {RESPONSES_API}")  # never silently unwoven
        try:
            self.feed.update(messages)
            context = self.feed.context()
        except Exception as exc:  # the agent must not die of its memory: send the history, say so
            self.failures += 1
            self.feed.reset()
            log.warning("contextweaver failed (%s); this query gets the full history", exc)
            return messages
        self.last_context = context
        self.log.add(context, time.perf_counter() - started, self.feed.sources(context))
        if not self.keep_records:
            self.log.drop_pending()
        return context.messages

    def query(self, messages: list[dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
        return self.inner.query(self.weave(messages), **kwargs)

    def format_message(self, **kwargs: Any) -> dict[str, Any]:
        return self.inner.format_message(**kwargs)

    def format_observation_messages(
        self,
        message: dict[str, Any],
        outputs: list[dict[str, Any]],
        template_vars: dict[str, Any] | None = None,
    ) -> list[dict[str, Any]]:
        return self.inner.format_observation_messages(message, outputs, template_vars)

    def get_template_vars(self, **kwargs: Any) -> dict[str, Any]:
        return self.inner.get_template_vars(**kwargs)

    def stats(self) -> dict[str, Any]:
        return {
            **self.feed.stats(),
            "failures": self.failures,
            "memory": memory_usage(self.feed.memory_model),
        }

    def summary(self) -> dict[str, Any]:
        """What goes into the trajectory's info: settings, per-query context tokens, the memory's cost."""
        return {
            "settings": self.settings.model_dump(mode="json"),
            "effective": describe(self.settings),
            "budget_from": self.budget_from,
            "queries": len(self.log.summaries),
            "context_tokens": [s["tokens"] for s in self.log.summaries],
            "full_history_tokens": [s["full_history_tokens"] for s in self.log.summaries],
            "stats": self.stats(),
        }

    def serialize(self) -> dict[str, Any]:
        data = self.inner.serialize()
        info = data.setdefault("info", {})
        info["contextweaver"] = self.summary()
        return data

    def write_sidecars(self, trajectory: Path) -> tuple[Path, Path]:
        """Write the graph and append the new woven contexts beside `trajectory`."""
        graph_path, contexts_path = sidecar_paths(trajectory)
        self.log.flush(contexts_path)
        document = graph_document(
            self.feed.strategy, self.settings.model_dump(mode="json"), self.summary()["stats"]
        )
        graph_path.write_text(json.dumps(document, indent=1, ensure_ascii=False), encoding="utf-8")
        return graph_path, contexts_path


INTERACTIVE_FIELDS = ("mode", "whitelist_actions", "confirm_exit")
"""Settings only mini-swe-agent's InteractiveAgent reads (`mini`'s default agent, mini.yaml)."""


def _agent_class(spec: str, config: dict[str, Any]) -> type:
    """The agent ContextWeaverAgent extends: `wrapped_agent_class`, else the one the config is for."""
    if not spec:
        return get_agent_class("interactive" if any(k in config for k in INTERACTIVE_FIELDS) else "default")
    from minisweagent.agents.interactive import InteractiveAgent  # imports prompt_toolkit: only here

    base = get_agent_class(spec)
    given = [k for k in INTERACTIVE_FIELDS if k in config]
    if given and not issubclass(base, InteractiveAgent):
        raise ValueError(
            f"agent.{given[0]} is a setting of the interactive agent, but wrapped_agent_class is {spec!r}: "
            "remove it, or set wrapped_agent_class: interactive so commands are confirmed as configured"
        )
    return base


@cache
def _weaving_class(base: type) -> type:
    """ContextWeaverAgent on top of `base`: the base's own loop, modes and prompts; the woven model."""
    if issubclass(base, ContextWeaverAgent) or base is DefaultAgent:
        return ContextWeaverAgent
    return type(f"ContextWeaver{base.__name__}", (ContextWeaverAgent, base), {"__module__": __name__})


def _config_class(cls: type) -> type[BaseModel]:
    """The base agent's config class (the default of its `config_class` argument)."""
    for klass in cls.__mro__:
        if klass is ContextWeaverAgent or "__init__" not in vars(klass):
            continue
        parameter = inspect.signature(vars(klass)["__init__"]).parameters.get("config_class")
        if parameter is not None and isinstance(parameter.default, type):
            return parameter.default
    return AgentConfig


@cache
def _with_settings(config: type[BaseModel]) -> type[BaseModel]:
    """`config` plus the `contextweaver:` block (validated with the rest of the agent's config)."""
    created: type[BaseModel] = create_model(
        f"ContextWeaver{config.__name__}",
        __base__=config,
        contextweaver=(WeavingSettings, Field(default_factory=WeavingSettings)),
    )
    return created


class ContextWeaverAgent(DefaultAgent):
    """The agent you would run, whose model sees the woven context; graph and contexts saved beside
    the trajectory.

    It extends the agent the config is written for: mini-swe-agent's InteractiveAgent when the config
    has its settings (`mode`, `whitelist_actions`, `confirm_exit`, as `mini.yaml` does), so commands
    are confirmed exactly as without ContextWeaver; DefaultAgent otherwise; or `wrapped_agent_class`.
    """

    def __new__(cls, *args: Any, wrapped_agent_class: str = "", **kwargs: Any) -> ContextWeaverAgent:
        if cls is ContextWeaverAgent:
            cls = _weaving_class(_agent_class(wrapped_agent_class, kwargs))
        instance: ContextWeaverAgent = super().__new__(cls)
        return instance

    def __init__(
        self,
        model: Any,
        env: Any,
        *,
        wrapped_agent_class: str = "",
        config_class: type | None = None,
        **kwargs: Any,
    ) -> None:
        config_class = _with_settings(config_class or _config_class(type(self)))
        super().__init__(model, env, config_class=config_class, **kwargs)
        settings: WeavingSettings = self.config.contextweaver
        if not isinstance(model, WeavingModel):
            model = WeavingModel(model=model, contextweaver=settings)
            self.config.contextweaver = model.settings  # the saved config shows the budget taken, if any
        model.keep_records = True
        self.model: WeavingModel = model
        self.env = RecallShell(self.env, lambda: self.model.feed.strategy)
        """`contextweaver recall N` is answered from memory, never sent to the environment."""

    def run(self, task: str = "", **kwargs: Any) -> dict[str, Any]:
        self.model.reset()
        result: dict[str, Any] = super().run(task, **kwargs)
        return result

    def save(self, path: Path | None, *extra_dicts: dict[str, Any]) -> dict[str, Any]:
        data: dict[str, Any] = super().save(path, *extra_dicts)
        if path:
            self.model.write_sidecars(Path(path))
        else:
            self.model.log.drop_pending()
        return data
