"""The settings an agent framework passes to ContextWeaver, shared by every integration.

One small validated block in the agent's own YAML (mini-swe-agent's `agent.contextweaver`,
a SWE-agent history processor entry): which strategy weaves the context, W, m, the analyzer and
the token budget. `strategy` also names the baselines, so the same harness runs the comparison.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from contextweaver import strategies
from contextweaver.config import ModelConfig, WeaverConfig
from contextweaver.models import Usage, usage_of
from contextweaver.protocols import Model, Strategy


class WeavingSettings(BaseModel):
    """What to weave with. Unset fields keep the library's defaults (W=5, m=3, heuristic analyzer)."""

    model_config = ConfigDict(extra="forbid")

    strategy: str = "contextweaver"
    window: int | None = Field(
        default=None, ge=1, description="W for contextweaver; n (observations kept) for the baselines"
    )
    max_parents: int | None = Field(default=None, ge=1, description="m: parents per node")
    analyzer: str | None = None
    budget: int | None = Field(default=None, ge=1, description="hard token budget for every woven context")
    memory_model: ModelConfig | None = None
    options: dict[str, Any] = Field(
        default_factory=dict, description="any other WeaverConfig field (summarizer, llm_mode, ...)"
    )
    record_messages: bool = True
    """Save each woven context's messages beside the trajectory (decisions are always saved)."""

    @field_validator("strategy")
    @classmethod
    def _known_strategy(cls, name: str) -> str:
        strategies.spec(name)  # an unknown name lists the valid ones
        return name

    def weaver_config(self) -> WeaverConfig:
        data: dict[str, Any] = dict(self.options)
        for key in ("window", "max_parents", "analyzer", "budget", "memory_model"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        return WeaverConfig.model_validate(data)


def build_strategy(settings: WeavingSettings) -> tuple[Strategy, Model | None]:
    """A fresh strategy for one conversation, plus the memory model it spends tokens on (or None)."""
    if strategies.spec(settings.strategy).baseline is None:
        config = settings.weaver_config()
        chosen = config.model_dump(include=config.model_fields_set)
        built = strategies.build_strategy(settings.strategy, chosen)
        return built.strategy, built.model
    if settings.analyzer or settings.max_parents or settings.options or settings.memory_model:
        raise ValueError(
            f"strategy {settings.strategy!r} takes only `window` and `budget`; "
            "analyzer, max_parents, memory_model and options apply to the ContextWeaver strategies (cw, cw-*)"
        )
    window = {"window": settings.window} if settings.window else {}
    built = strategies.build_strategy(settings.strategy, window)
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
