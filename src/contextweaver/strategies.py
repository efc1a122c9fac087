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

GROUPS = {
    "contextweaver": "ContextWeaver: the three to choose between",
    "baseline": "baselines: what ContextWeaver is measured against",
    "research": "research: variants and arms the evaluation studies",
}
"""The groups of the table, in the order help and docs list them."""


@dataclass(frozen=True)
class StrategySpec:
    description: str
    baseline: str | None = None
    """A `baselines/` registry name; None for a ContextWeaver configuration."""
    weaver: Mapping[str, Any] = field(default_factory=dict)
    """The WeaverConfig settings this name fixes (ContextWeaver entries only)."""
    window_arg: str | None = None
    """The baseline's constructor argument that the `window` setting fills."""
    group: str = field(default="research", kw_only=True)
    """One of GROUPS: where help and docs list the name."""


PAPER = {"analyzer": "heuristic", "selector": "ancestry", "mode": "per_step"}
"""The paper's Algorithm 1 weaves every context anew; the library default is lazy (see `WeaverConfig.mode`)."""

TABLE: dict[str, StrategySpec] = {
    "cw": StrategySpec(
        "the default: steps pass whole until the budget's high-water mark, then one cut that later requests "
        "extend (prompt-cache friendly)",
        group="contextweaver",
    ),
    "cw-select": StrategySpec(
        "per-step selection, woven every step: the last W outputs plus excerpts of older ones recent steps mention",
        weaver={"selector": "select", "mode": "per_step"},
        group="contextweaver",
    ),
    "cw-paper": StrategySpec(
        "the paper's Algorithm 1, woven every step: heuristic analyzer, ancestry BFS",
        weaver=PAPER,
        group="contextweaver",
    ),
    "full": StrategySpec(
        "the whole history; under a budget, the newest steps that fit whole and older ones cut",
        baseline="full",
        group="baseline",
    ),
    "sliding_window": StrategySpec(
        "the last 5 observations, older ones as placeholders",
        "sliding_window",
        window_arg="n",
        group="baseline",
    ),
    "masking": StrategySpec(
        "the last 10 observations (observation masking)", "masking", window_arg="n", group="baseline"
    ),
    "bm25": StrategySpec(
        "the k observations BM25 ranks highest for the latest step", "bm25", window_arg="k", group="baseline"
    ),
    "llm_summary": StrategySpec(
        "the last 5 steps plus an LLM summary of the older ones",
        "llm_summary",
        window_arg="keep_last",
        group="baseline",
    ),
    "llm_summary_lazy": StrategySpec(
        "the history unchanged until the budget's high-water mark, then the LLM summary applied once",
        "llm_summary_lazy",
        window_arg="keep_last",
        group="baseline",
    ),
    "cw-perstep": StrategySpec(
        "ContextWeaver's defaults, but every context woven anew (no lazy cuts)", weaver={"mode": "per_step"}
    ),
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
        "ContextWeaver, what the recent steps use",
        weaver={"selector": "frontier", "lazy": {"selector": None}},
    ),
    "cw-recency": StrategySpec(
        "ContextWeaver's recency arm (a W-step window)",
        weaver={"selector": "recency", "lazy": {"selector": None}},
    ),
}
ALIASES = {"contextweaver": "cw", "cw-adaptive": "cw", "cw-ancestry": "cw-paper", "cw-heuristic": "cw-paper"}
"""Other names of a table entry: `cw-adaptive` is the default (its selector is `adaptive`); `cw-ancestry`
(its selector) and `cw-heuristic` (its analyzer), the paper's method, are the names it had before and
are accepted, not listed. Reports show the table name."""
LISTED_ALIASES = ("contextweaver", "cw-adaptive")
"""The aliases help lists (beside `cw`)."""
REPLAY_DEFAULT = ("cw", "cw-select", "sliding_window", "masking", "full")
"""The default first (its kept steps are the table's column), then the per-step selection, then the
baselines."""
EVAL_CANDIDATES = (
    "full",
    "sliding_window",
    "masking",
    "bm25",
    "llm_summary",
    "cw-paper",
    "cw-llm",
    "cw-hybrid",
    "cw",
    "cw-select",
)
"""What `contextweaver eval` runs without `-s`, less those that call a memory model when none is
configured (`eval_default`); `-s all` runs the whole table."""


def eval_default(real_model: bool) -> list[str]:
    """EVAL_CANDIDATES; the ones that call a memory model only when a real one (not the offline fake) is
    configured: the fake's summaries would be measured as if a model had written them."""
    return [name for name in EVAL_CANDIDATES if real_model or not needs_model(name)]


def names_in(group: str) -> list[str]:
    return [name for name, entry in TABLE.items() if entry.group == group]


def choices_text() -> str:
    """The names for `-s` help: the three ContextWeaver strategies, the baselines, where research names are."""
    return (
        f"ContextWeaver: {', '.join(names_in('contextweaver'))}; baselines: {', '.join(names_in('baseline'))}; "
        "`contextweaver strategies` lists the research names too"
    )


def cw_settings(overrides: Sequence[str]) -> dict[str, Any]:
    """`key=value` overrides (dotted keys nest) as the settings mapping `build_strategy` takes."""
    return apply_overrides({}, list(overrides))


def strategy_names() -> list[str]:
    return list(TABLE)


def spec(name: str) -> StrategySpec:
    """The table entry of a name (or alias); an unknown name lists the valid ones."""
    found = TABLE.get(ALIASES.get(name, name))
    if found is None:
        raise UnknownName(f"unknown strategy {name!r}; valid: {', '.join([*TABLE, *LISTED_ALIASES])}")
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
