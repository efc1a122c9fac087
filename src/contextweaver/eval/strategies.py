"""The strategies the harness compares, by name: baselines and ContextWeaver configurations.

Each factory returns a fresh strategy plus the memory model it calls (None for zero-LLM ones), wrapped
so the harness can count the model's calls and tokens and subtract its time from the memory's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from contextweaver.config import ModelConfig, WeaverConfig, apply_overrides
from contextweaver.models.wrapper import ModelWrapper
from contextweaver.protocols import Completion, Model, Strategy
from contextweaver.types import Message

CW_CONFIGS: dict[str, dict[str, Any]] = {
    "cw-heuristic": {"selector": "ancestry"},
    "cw-llm": {"analyzer": "llm", "summarizer": "llm", "selector": "ancestry"},
    "cw-hybrid": {"analyzer": "hybrid", "summarizer": "llm", "llm_mode": "fused", "selector": "ancestry"},
    "cw-adaptive": {"selector": "adaptive"},
    "cw-recency": {"selector": "recency"},
    "cw-frontier": {"selector": "frontier"},
    "cw-select": {"selector": "select"},
}
"""ContextWeaver settings per strategy name; the llm/hybrid ones use the memory model (fake by default).
The analyzer variants share the paper's ancestry selection, so they differ only in the parents chosen."""
BASELINE_NAMES = ("full", "sliding_window", "masking", "bm25", "llm_summary")
STRATEGIES = (*BASELINE_NAMES, *CW_CONFIGS)
DEFAULT_STRATEGIES = tuple(s for s in STRATEGIES if s not in ("cw-recency", "cw-frontier"))
"""The issue's list; cw-recency (the adaptive selector's recency arm) and cw-frontier run with `-s all`."""
USES_MODEL = frozenset({"llm_summary", "cw-llm", "cw-hybrid"})


class TimedModel(ModelWrapper):
    """Delegates to a model and adds up the wall time spent inside it (LLM time, not memory time)."""

    def __init__(self, model: Model) -> None:
        super().__init__(model)
        self.seconds = 0.0

    def complete(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        json_schema: dict[str, Any] | None = None,
    ) -> Completion:
        start = time.perf_counter()
        try:
            return self.forward(messages, temperature, max_tokens, json_schema)
        finally:
            self.seconds += time.perf_counter() - start


@dataclass
class Built:
    strategy: Strategy
    model: TimedModel | None


def weaver_config(name: str, overrides: Sequence[str] = ()) -> WeaverConfig:
    """The ContextWeaver config of a cw-* strategy, with `key=value` overrides applied on top."""
    data = apply_overrides({**CW_CONFIGS[name]}, list(overrides))
    return WeaverConfig.model_validate(data)


def build_strategy(
    name: str,
    overrides: Sequence[str] = (),
    model_config: ModelConfig | None = None,
    seed: int | None = None,
) -> Built:
    """A fresh strategy object for one trajectory. Unknown names list the valid ones. `seed` reaches the
    memory model, so replays with different seeds sample differently where the backend samples."""
    from contextweaver.baselines import BASELINES
    from contextweaver.models import build_model

    if name not in STRATEGIES:
        raise ValueError(f"unknown strategy {name!r}; valid: {', '.join(STRATEGIES)}")
    model = (
        TimedModel(build_model(model_config or ModelConfig(backend="fake"), seed=seed))
        if name in USES_MODEL
        else None
    )
    if name in CW_CONFIGS:
        from contextweaver.weaver import ContextWeaver

        config = weaver_config(name, overrides)
        if model_config is not None:
            config = config.model_copy(update={"memory_model": model_config})
        return Built(ContextWeaver(config, model=model), model)
    if name == "llm_summary":
        return Built(BASELINES.get(name)(model=model), model)
    return Built(BASELINES.get(name)(), None)


StrategyFactory = Callable[[], Built]
