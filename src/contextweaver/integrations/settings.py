"""The settings an agent framework passes to ContextWeaver, shared by every integration.

One small validated block in the agent's own config (mini-swe-agent's `agent.contextweaver`, a
SWE-agent history processor entry, the OpenHands condenser, the LangGraph hook): which strategy
weaves the context, and the `WeaverConfig` it uses, nested under `weaver:`. The most used
WeaverConfig fields (window, max_parents, analyzer, budget, memory_model) may also be written at
the top level, as before; either way every key is validated when the config is loaded, so a typo
fails at start with the name of the setting, not at the first query.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from contextweaver import strategies
from contextweaver.baselines import BASELINES
from contextweaver.config import WeaverConfig
from contextweaver.models import Usage, usage_of
from contextweaver.protocols import Model, Strategy
from contextweaver.weaving.modes import WeaveSettings

SHORTCUTS = ("window", "max_parents", "analyzer", "budget", "memory_model")
"""WeaverConfig fields also accepted at the top level of the block."""
BASELINE_FIELDS = frozenset({"window", "budget"})
"""What a baseline takes: `window` is its n (observations kept), `budget` its token budget."""
EFFECTIVE_FIELDS = ("selector", "mode", "analyzer", "summarizer", "window", "max_parents")
"""What `describe` names of the configuration a ContextWeaver strategy really runs."""

log = logging.getLogger("contextweaver.integrations")
_said: set[str] = set()


class WeavingSettings(BaseModel):
    """What to weave with. Unset fields keep the library's defaults (W=5, m=3, heuristic analyzer)."""

    model_config = ConfigDict(extra="forbid")

    strategy: str = "contextweaver"
    weaver: WeaverConfig = Field(default_factory=WeaverConfig)
    """ContextWeaver's own settings (any WeaverConfig field: summarizer, selector, llm_mode, ...)."""
    record_messages: bool = True
    """Save each woven context beside the trajectory as references to its messages plus what was
    cut (the full text is rebuilt by `contextweaver contexts`); decisions are always saved."""

    @model_validator(mode="before")
    @classmethod
    def _nest_shortcuts(cls, data: Any) -> Any:
        """Fold top-level WeaverConfig fields into `weaver`; name the replacement of `options`."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if "options" in data:
            options = data["options"] if isinstance(data["options"], dict) else {}
            keys = ", ".join(f"{k}: {v}" for k, v in options.items()) or "..."
            raise ValueError(
                f"`options` is no longer read: write those settings under `weaver:` instead, "
                f"e.g. weaver: {{{keys}}} (each key is a WeaverConfig field, checked at load time)"
            )
        nested = data.get("weaver") or {}
        if isinstance(nested, WeaverConfig):
            nested = nested.model_dump(exclude_unset=True)
        nested = dict(nested)
        for key in SHORTCUTS:
            if key in data:
                value = data.pop(key)
                if key in nested and nested[key] != value:
                    raise ValueError(f"`{key}` is set both at the top level and under `weaver:`; keep one")
                if value is not None:
                    nested[key] = value
        if nested or "weaver" in data:
            data["weaver"] = nested
        return data

    @field_validator("strategy")
    @classmethod
    def _known_strategy(cls, name: str) -> str:
        strategies.spec(name)  # an unknown name lists the valid ones
        return name

    @model_validator(mode="after")
    def _baseline_fields(self) -> WeavingSettings:
        """Baselines take only two fields (component names are checked by `WeaverConfig` itself)."""
        extra = sorted(self.weaver.model_fields_set - BASELINE_FIELDS)
        if self.is_baseline and extra:
            raise ValueError(
                f"strategy {self.strategy!r} takes only `window` and `budget`; {', '.join(extra)} apply "
                "to the ContextWeaver strategies (contextweaver, cw-*): remove them or change the strategy"
            )
        return self

    @property
    def is_baseline(self) -> bool:
        return strategies.spec(self.strategy).baseline is not None

    @property
    def window(self) -> int | None:
        """W (contextweaver) or n (baselines), when the config set it."""
        return self.weaver.window if "window" in self.weaver.model_fields_set else None

    @property
    def budget(self) -> int | None:
        return self.weaver.budget

    @model_serializer(mode="wrap")
    def _effective_dump(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        """Saved configs show what runs: a `weaver:` field the block left unset has the value the strategy
        name gives it (`cw-paper` records selector ancestry, mode per_step), not WeaverConfig's default."""
        data = handler(self)
        if self.is_baseline or not isinstance(data, dict) or not isinstance(data.get("weaver"), dict):
            return data
        effective = self.weaver_config().model_dump(mode=info.mode)
        unset = set(data["weaver"]) - self.weaver.model_fields_set
        data["weaver"] = {k: effective[k] if k in unset else v for k, v in data["weaver"].items()}
        return data

    def with_budget(self, budget: int | None) -> WeavingSettings:
        """A copy whose budget is `budget` (the model's context window when the block set none)."""
        if budget is None:
            return self
        return self.model_copy(update={"weaver": self.weaver.model_copy(update={"budget": budget})})

    def weaver_config(self) -> WeaverConfig:
        """What the strategy name fixes, with these settings on top (the one strategy table decides)."""
        return strategies.weaver_config(self.strategy, self.chosen())

    def chosen(self) -> dict[str, Any]:
        """The WeaverConfig fields this block sets (the rest come from the strategy name)."""
        return self.weaver.model_dump(include=self.weaver.model_fields_set)


def build_strategy(settings: WeavingSettings) -> tuple[Strategy, Model | None]:
    """A fresh strategy for one conversation, plus the memory model it spends tokens on (or None)."""
    if settings.is_baseline:
        window = {"window": settings.window} if settings.window else {}
        built = strategies.build_strategy(settings.strategy, window)
    else:
        built = strategies.build_strategy(settings.strategy, settings.chosen())
    return built.strategy, built.model


def memory_usage(model: Model | None) -> dict[str, int]:
    """Calls and tokens the memory itself spent (zeros for strategies that call no LLM)."""
    usage: Usage | None = usage_of(model) if model is not None else None
    if usage is None:
        return {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
    total = usage.total
    return {
        "calls": total.calls,
        "prompt_tokens": total.prompt_tokens,
        "completion_tokens": total.completion_tokens,
    }


def describe(settings: WeavingSettings) -> str:
    """`cw-paper (selector ancestry, mode per_step, ...), budget 32,000 tokens`: what will run."""
    if settings.is_baseline:
        window = f", window {settings.window}" if settings.window else ""
        inner = f"baseline {strategies.spec(settings.strategy).baseline}{window}"
    else:
        config = settings.weaver_config()
        inner = ", ".join(f"{name} {getattr(config, name)}" for name in EFFECTIVE_FIELDS)
    budget = f"budget {settings.budget:,} tokens" if settings.budget else "no budget"
    return f"{settings.strategy} ({inner}), {budget}"


def cuts_nothing(settings: WeavingSettings) -> bool:
    """Whether the strategy passes the history through whole (`WeaveSettings.cuts_nothing` decides)."""
    if settings.is_baseline:
        weaving = BASELINES.get(strategies.spec(settings.strategy).baseline or "").weave_settings
    else:
        weaving = WeaveSettings.of(settings.weaver_config())
    return weaving.cuts_nothing(settings.budget)


def announce(
    integration: str, settings: WeavingSettings, budget_from: str | None = None, then: str = ""
) -> str:
    """Say once per process, as a logging WARNING when the user would otherwise be surprised, what the
    integration will do: the budget it took and from where, or that it will cut nothing. Returns it."""
    if budget_from:
        message = f"{integration}: no budget was set, so it is {budget_from}: {describe(settings)}"
    elif cuts_nothing(settings):
        message = (
            f"{integration}: {describe(settings)}: without a budget the history passes through whole and "
            f"no TEST STATUS line is added (nothing is cut){then}. Set `budget:` (e.g. the model's context "
            "window) to weave under it, or `strategy: cw-paper` to weave every step"
        )
    else:
        message = f"{integration}: weaving with {describe(settings)}"
    return say_once(message, logging.WARNING if budget_from or cuts_nothing(settings) else logging.INFO)


def announce_uncounted_tools(integration: str, settings: WeavingSettings, fix: str) -> str | None:
    """Say once, as a WARNING, that the tool definitions every call sends are not in the budget (only
    when there is a budget: without one nothing is cut). Returns what was said, or None."""
    if settings.budget is None:
        return None
    message = (
        f"{integration}: the tool definitions sent with every call are not counted against the budget "
        f"({settings.budget:,} tokens), so a request can exceed it by their size: {fix}"
    )
    return say_once(message, logging.WARNING)


def say_once(message: str, level: int) -> str:
    """Log a start-up message once per process (frameworks copy or rebuild the integration per agent)."""
    if message not in _said:
        _said.add(message)
        log.log(level, message)
    return message


def litellm_window(model_name: str) -> int | None:
    """The model's input window from litellm's model info, when litellm is already imported (importing it
    just for this costs seconds and, offline, a failed download) and knows the model."""
    litellm = sys.modules.get("litellm")
    if litellm is None or not model_name:
        return None
    try:
        window = litellm.get_model_info(model_name).get("max_input_tokens")
    except Exception:  # litellm raises for models it does not know
        return None
    return window if isinstance(window, int) and window > 0 else None
