"""The one strategy table: every name that replay, eval, the integrations, the proxy and the benchmarks
accept, and what it builds. A name means one configuration everywhere.

A baseline entry names a class of `baselines/`; a ContextWeaver entry lists the `WeaverConfig` settings it
fixes. User settings apply on top (`window` also sets a baseline's n). The memory model is built here,
once per strategy object, and handed to the parts that call an LLM.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from contextweaver.annotate import needs_model as annotate_needs_model
from contextweaver.config import ModelConfig, WeaverConfig, apply_overrides, validated
from contextweaver.errors import ConfigError, UnknownName
from contextweaver.models.timed import TimedModel
from contextweaver.protocols import Strategy


@dataclass(frozen=True)
class StrategySpec:
    description: str
    baseline: str | None = None
    """A `baselines/` registry name; None for a ContextWeaver configuration."""
    weaver: Mapping[str, Any] = field(default_factory=dict)
    """The WeaverConfig settings this name fixes (ContextWeaver entries only)."""
    window_arg: str | None = None
    """The baseline's constructor argument that the `window` setting fills."""


PAPER = {"analyzer": "heuristic", "selector": "ancestry", "mode": "per_step"}
"""The paper's Algorithm 1 weaves every context anew; the library default is lazy (see `WeaverConfig.mode`)."""

TABLE: dict[str, StrategySpec] = {
    "full": StrategySpec(
        "the whole history; under a budget, the newest steps that fit whole and older ones cut", baseline="full"
    ),
    "sliding_window": StrategySpec(
        "the last 5 observations, older ones as placeholders", "sliding_window", window_arg="n"
    ),
    "masking": StrategySpec("the last 10 observations (observation masking)", "masking", window_arg="n"),
    "bm25": StrategySpec("the k observations BM25 ranks highest for the latest step", "bm25", window_arg="k"),
    "llm_summary": StrategySpec(
        "the last 5 steps plus an LLM summary of the older ones", "llm_summary", window_arg="keep_last"
    ),
    "llm_summary_lazy": StrategySpec(
        "the history unchanged until the budget's high-water mark, then the LLM summary applied once",
        "llm_summary_lazy",
        window_arg="keep_last",
    ),
    "cw": StrategySpec("ContextWeaver with the library defaults (or the settings given)"),
    "cw-perstep": StrategySpec(
        "ContextWeaver's defaults, but every context woven anew (no lazy cuts)", weaver={"mode": "per_step"}
    ),
    "cw-ancestry": StrategySpec("ContextWeaver as the paper: heuristic analyzer, ancestry BFS", weaver=PAPER),
    "cw-llm": StrategySpec(
        "the paper's method with the LLM analyzer and summaries (three calls per step)",
        weaver={"analyzer": "llm", "summarizer": "llm", "selector": "ancestry", "mode": "per_step"},
    ),
    "cw-hybrid": StrategySpec(
        "the paper's selection; the LLM judges the heuristic's top C in one fused call per step",
        weaver={
            "analyzer": "hybrid",
            "summarizer": "llm",
            "llm_mode": "fused",
            "selector": "ancestry",
            "mode": "per_step",
        },
    ),
    "cw-frontier": StrategySpec(
        "ContextWeaver, what the recent steps use", weaver={"selector": "frontier", "lazy": {"selector": None}}
    ),
    "cw-recency": StrategySpec(
        "ContextWeaver's recency arm (a W-step window)", weaver={"selector": "recency", "lazy": {"selector": None}}
    ),
    "cw-select": StrategySpec(
        "ContextWeaver, per-step selection: the last W outputs plus excerpts of older ones recent steps mention",
        weaver={"selector": "select", "mode": "per_step"},
    ),
}
ALIASES = {"contextweaver": "cw", "cw-adaptive": "cw", "cw-heuristic": "cw-ancestry"}
"""Other names of a table entry: `cw-adaptive` is the default (its selector is `adaptive`), `cw-heuristic`
the paper's method (its analyzer is `heuristic`). Reports show the table name."""
REPLAY_DEFAULT = ("cw-select", "cw", "sliding_window", "masking", "full")
"""The per-step selection first (its kept steps are the table's column), then the lazy default, which
passes a history under its budget through whole, then the baselines."""
EVAL_DEFAULT = (
    "full",
    "sliding_window",
    "masking",
    "bm25",
    "llm_summary",
    "cw-ancestry",
    "cw-llm",
    "cw-hybrid",
    "cw",
    "cw-select",
)
"""What `contextweaver eval` runs without `-s`: the baselines, the paper's modes, the lazy default (`cw`)
and the per-step selection the frontier section is about; `-s all` runs the whole table."""


def cw_settings(overrides: Sequence[str]) -> dict[str, Any]:
    """`key=value` overrides (dotted keys nest) as the settings mapping `build_strategy` takes."""
    return apply_overrides({}, list(overrides))


def strategy_names() -> list[str]:
    return list(TABLE)


def spec(name: str) -> StrategySpec:
    """The table entry of a name (or alias); an unknown name lists the valid ones."""
    found = TABLE.get(ALIASES.get(name, name))
    if found is None:
        raise UnknownName(f"unknown strategy {name!r}; valid: {', '.join([*TABLE, *ALIASES])}")
    return found


def weaver_config(name: str, settings: Mapping[str, Any] | None = None) -> WeaverConfig:
    """The ContextWeaver config a name means: library defaults, then the name's settings, then the user's."""
    entry = spec(name)
    if entry.baseline is not None:
        raise ConfigError(f"strategy {name!r} is a baseline, not a ContextWeaver configuration")
    return validated(merged(entry.weaver, settings or {}), f"strategy {name!r}: ")


def merged(base: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """`given` over `base`, nested settings merged key by key (`lazy: {low_water: ...}` keeps the name's
    `lazy.selector`)."""
    out = dict(base)
    for key, value in given.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merged(out[key], value)
        else:
            out[key] = value
    return out


def needs_model(name: str, settings: Mapping[str, Any] | None = None) -> bool:
    """Whether the strategy calls a memory model (decided by its components' `uses_model`)."""
    entry = spec(name)
    if entry.baseline is not None:
        from contextweaver.baselines import BASELINES

        return bool(getattr(BASELINES.get(entry.baseline), "uses_model", False))
    return annotate_needs_model(weaver_config(name, settings))


@dataclass
class Built:
    """A fresh strategy for one conversation and the memory model it spends on (None when it calls none)."""

    strategy: Strategy
    model: TimedModel | None


def build_strategy(
    name: str,
    settings: Mapping[str, Any] | None = None,
    *,
    model_config: ModelConfig | None = None,
    seed: int | None = None,
) -> Built:
    """Build `name` with user `settings` (WeaverConfig fields; for baselines only `window`). The memory
    model comes from `model_config`, else the settings' `memory_model`, else the offline fake; `seed`
    reaches it so replays with different seeds sample differently where the backend samples."""
    from contextweaver.models import memory_model

    entry = spec(name)
    settings = dict(settings or {})
    if model_config is not None:
        settings["memory_model"] = model_config
    if entry.baseline is not None:
        from contextweaver.baselines import BASELINES

        cls = BASELINES.get(entry.baseline)
        memory = settings.pop("memory_model", None)
        window = settings.pop("window", None)
        if settings:
            raise ConfigError(
                f"strategy {name!r} takes only `window`; {', '.join(sorted(settings))} apply to ContextWeaver (cw-*)"
            )
        kwargs: dict[str, Any] = {}
        if window is not None and entry.window_arg:
            kwargs[entry.window_arg] = window
        model = None
        if getattr(cls, "uses_model", False):
            model = memory_model(_model_config(memory), seed=seed)
            kwargs["model"] = model
        return Built(cls(**kwargs), model)
    from contextweaver.weaver import ContextWeaver

    config = weaver_config(name, settings)
    model = memory_model(config.memory_model, seed=seed) if annotate_needs_model(config) else None
    return Built(ContextWeaver(config, model=model), model)


def _model_config(value: Any) -> ModelConfig:
    if value is None:
        return ModelConfig()
    return value if isinstance(value, ModelConfig) else ModelConfig.model_validate(value)
