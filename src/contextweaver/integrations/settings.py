"""The settings an agent framework passes to ContextWeaver, shared by every integration.

One small validated block in the agent's own config (mini-swe-agent's `agent.contextweaver`, a
SWE-agent history processor entry, the OpenHands condenser, the LangGraph hook): which strategy
weaves the context, and the `WeaverConfig` it uses, nested under `weaver:`. The most used
WeaverConfig fields (window, max_parents, analyzer, budget, memory_model) may also be written at
the top level, as before; either way every key is validated when the config is loaded, so a typo
fails at start with the name of the setting, not at the first query.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from contextweaver import strategies
from contextweaver.config import WeaverConfig
from contextweaver.models import Usage, usage_of
from contextweaver.protocols import Model, Strategy

SHORTCUTS = ("window", "max_parents", "analyzer", "budget", "memory_model")
"""WeaverConfig fields also accepted at the top level of the block."""
BASELINE_FIELDS = frozenset({"window", "budget"})
"""What a baseline takes: `window` is its n (observations kept), `budget` its token budget."""


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
    def _check_names(self) -> WeavingSettings:
        """Component names are checked now, not at the first query; baselines take only two fields."""
        from contextweaver.analyzers import ANALYZERS
        from contextweaver.selectors import SELECTORS
        from contextweaver.summaries import SUMMARIZERS

        for field, registry in (
            ("analyzer", ANALYZERS),
            ("selector", SELECTORS),
            ("summarizer", SUMMARIZERS),
        ):
            name = getattr(self.weaver, field)
            if name not in registry.names():
                raise ValueError(
                    f"weaver.{field}: unknown {field} {name!r}; valid: {', '.join(registry.names())}"
                )
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
