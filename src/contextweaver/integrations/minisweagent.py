"""mini-swe-agent drop-in: weave the agent's messages with ContextWeaver before every model query.

Two ways in, both configured from mini-swe-agent's YAML:

- `agent_class: contextweaver.integrations.minisweagent.ContextWeaverAgent` with an
  `agent.contextweaver:` block (strategy, window, max_parents, analyzer, budget). The trajectory
  file keeps the full, unwoven history; the graph and the woven contexts are saved beside it.
- `model_class: contextweaver.integrations.minisweagent.WeavingModel` (with `wrapped_model_class`
  and a `model.contextweaver:` block) for runners whose agent class is fixed (`mini-extra swebench`):
  the same weaving, with a summary in the trajectory's `info.contextweaver`.

The agent keeps its messages; only the list sent to the model is woven. One ContextWeaver lives
per run and is fed only the turns added since the previous query.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

from minisweagent.agents.default import AgentConfig, DefaultAgent
from minisweagent.models import get_model_class

from contextweaver.integrations.feed import ChatFeed
from contextweaver.integrations.record import ContextLog, graph_document, sidecar_paths
from contextweaver.integrations.settings import WeavingSettings, memory_usage
from contextweaver.types import Message, WovenContext

log = logging.getLogger("contextweaver.integrations")


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
        self.inner = model
        self.config = model.config
        """The wrapped model's config (mini-swe-agent reads `model.config.model_name`)."""
        self.settings = WeavingSettings.model_validate(contextweaver or {})
        self.feed = ChatFeed(self.settings)
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
        try:
            self.feed.update(messages)
            context = self.feed.context()
        except Exception as exc:  # the agent must not die of its memory: send the history, say so
            self.failures += 1
            self.feed.reset()
            log.warning("contextweaver failed (%s); this query gets the full history", exc)
            return messages
        self.last_context = context
        self.log.add(context, time.perf_counter() - started)
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


class ContextWeaverAgentConfig(AgentConfig):
    contextweaver: WeavingSettings = WeavingSettings()
    """How the context is woven before each query (mini-swe-agent YAML: `agent.contextweaver`)."""


class ContextWeaverAgent(DefaultAgent):
    """DefaultAgent whose model sees the woven context; graph and contexts are saved beside the trajectory."""

    def __init__(self, model: Any, env: Any, *, config_class: type = ContextWeaverAgentConfig, **kwargs: Any):
        super().__init__(model, env, config_class=config_class, **kwargs)
        if not isinstance(model, WeavingModel):
            model = WeavingModel(model=model, contextweaver=self.config.contextweaver)
        model.keep_records = True
        self.model: WeavingModel = model

    def run(self, task: str = "", **kwargs: Any) -> dict[str, Any]:
        self.model.reset()
        return super().run(task, **kwargs)

    def save(self, path: Path | None, *extra_dicts: dict[str, Any]) -> dict[str, Any]:
        data = super().save(path, *extra_dicts)
        if path:
            self.model.write_sidecars(Path(path))
        else:
            self.model.log.drop_pending()
        return data
