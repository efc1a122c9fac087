"""Validated configuration, checked once: YAML-loadable and overridable with `-c key=value`."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from contextweaver.config.problems import described
from contextweaver.config.select_weights import load_settings
from contextweaver.errors import ConfigError
from contextweaver.registry import COMPONENTS
from contextweaver.tokens import token_count


class ModelConfig(BaseModel):
    """Which LLM does memory work (analyzer, summaries): a registered backend plus its settings."""

    model_config = ConfigDict(extra="forbid")

    backend: str = "fake"
    model: str = "fake-memory"
    base_url: str | None = None
    api_key_env: str | None = None
    """Name of the environment variable holding the API key (the key itself is never stored)."""
    timeout: float = 60.0
    max_retries: int = 2
    temperature: float = 0.0
    max_tokens: int = 512
    backoff: float = Field(default=0.5, ge=0.0, description="first retry delay in seconds; doubles per retry")
    breaker_threshold: int = Field(
        default=5, ge=1, description="consecutive failed calls that open the circuit"
    )
    breaker_cooldown: float = Field(
        default=30.0, ge=0.0, description="seconds the open circuit refuses calls"
    )
    response_format: Literal["none", "json_object", "json_object_schema", "json_schema"] = "json_object"
    """How JSON is requested: json_object_schema suits llama.cpp, json_schema suits OpenAI and vLLM."""
    cache_path: str | None = None
    """SQLite file for the response cache (table llm_cache); None disables caching."""


class LazySettings(BaseModel):
    """Lazy mode's cut: water marks as shares of the room the budget leaves above the root."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    high_water: float = Field(
        1.0, gt=0.0, le=1.0, description="weave when the context would exceed this share of the room"
    )
    low_water: float = Field(
        0.85,
        gt=0.0,
        le=1.0,
        description="the share a cut weaves down to; lower when the gap to the high mark would not hold two "
        "mean steps (not below `weaving/lazy.py`'s LOW_FLOOR), else the high mark itself",
    )
    calls_share: float = Field(
        0.3,
        ge=0.0,
        le=1.0,
        description="share of a cut's room, after the recency floor, held for older steps' calls before "
        "planned outputs",
    )
    small_room_gap: float = Field(
        0.0,
        ge=0.0,
        le=1.0,
        description="mean steps a cut leaves free below the high mark in a room too small for the usual gap "
        "(under `weaving/lazy.py`'s ONE_STEP_ROOM tokens, holding SMALL_ROOM_STEPS mean steps or more): fewer "
        "cuts and a lower bill for less next-step evidence (0: none, every step over the mark cuts; the "
        "measured trade is in docs/TUNING.md)",
    )
    selector: str | None = Field(
        "select",
        description="the selector a cut plans with (None: the config's `selector`). A cut is rare and its "
        "context frozen for the steps after it, so it takes the per-step selection, which kept more next-step "
        "evidence than adaptive's at a lower bill on the train splits (docs/TUNING.md)",
    )

    @field_validator("selector")
    @classmethod
    def _registered(cls, name: str | None) -> str | None:
        if name is not None:
            COMPONENTS["selector"].check(name)
        return name

    @model_validator(mode="after")
    def _marks_in_order(self) -> LazySettings:
        if self.low_water > self.high_water:
            raise ValueError(
                f"lazy.low_water ({self.low_water}) must not exceed lazy.high_water ({self.high_water}): "
                "the context is woven down from the high mark to the low one"
            )
        return self


class SelectChoices(BaseModel):
    """The per-step selection (`selector: select`): which weights file, and two of its figures overridden."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    weights: str | None = Field(
        None, description="a weights JSON written by `contextweaver fit` (your runs); None: the shipped one"
    )
    extra_tokens: int | None = Field(
        None,
        ge=0,
        description="tokens per context spent on excerpts of outputs older than W (None: the weights')",
    )
    excerpt_tokens: int | None = Field(
        None, ge=16, description="the most tokens one older output's excerpt may take (None: the weights')"
    )

    @field_validator("weights")
    @classmethod
    def _weights_readable(cls, path: str | None) -> str | None:
        """A bad weights file fails when the settings are read, not in the middle of a run."""
        if path is not None:
            load_settings(path)
        return path


MOVED = {
    "high_water": ("lazy", "high_water"),
    "low_water": ("lazy", "low_water"),
    "cut_calls_share": ("lazy", "calls_share"),
    "select_weights": ("select", "weights"),
    "select_extra_tokens": ("select", "extra_tokens"),
    "select_excerpt_tokens": ("select", "excerpt_tokens"),
}
"""Settings renamed in 0.3 (old name -> group, new name): the old names work, with a warning, until 0.4."""


class WeaverConfig(BaseModel):
    """ContextWeaver's settings: the user's choices. Defaults follow the paper (W=5) and SPEC (m=3,
    heuristic analyzer); the selector defaults to `adaptive`, which beat the paper's `ancestry` on recall
    and tokens. Component names are checked here, so a bad one fails when the settings are read."""

    model_config = ConfigDict(extra="forbid")

    window: int = Field(5, ge=1, description="W: ancestors kept in full; also the warmup length")
    max_parents: int = Field(3, ge=1, description="m: parents per node (1 gives the tree variant)")
    analyzer: str = "heuristic"
    summarizer: str = "extractive"
    selector: str = "adaptive"
    """adaptive (measured best on the dev set), ancestry (the paper's BFS), frontier, recency, select."""
    llm_mode: Literal["three_call", "fused"] = "three_call"
    hybrid_top_c: int = Field(12, ge=1, description="C: candidates the LLM judges in hybrid mode")
    memory_model: ModelConfig = Field(default_factory=ModelConfig)
    budget: int | None = Field(None, ge=1, description="hard token budget for every woven context")
    mode: Literal["lazy", "per_step"] = "lazy"
    """lazy: pass the history through until it crosses the high-water mark of the budget, then weave once
    down to the low-water mark and append unchanged again (the prefix stays byte-stable, so a provider's
    prompt cache keeps serving it); per_step: weave every context anew (the paper's Algorithm 1)."""
    lazy: LazySettings = Field(default_factory=LazySettings)
    select: SelectChoices = Field(default_factory=SelectChoices)
    drop_repeated_outputs: bool = Field(
        True, description="compress a kept step whose output lines all recur in a later kept output"
    )
    working_state: bool = Field(
        True,
        description="a cut writes what it left out, the files changed and the failing tests after the steps it keeps",
    )
    recall: bool = Field(
        True,
        description="each placeholder, trim and excerpt marker names its step, and the note says how the "
        "agent reads a step again in full (docs/recall.md); false: SWE-agent's placeholders, no recall line",
    )
    recall_hint: str = Field(
        "`contextweaver recall N`; search what was cut: `contextweaver recall 'words'`",
        description="how the agent reads a step again, as the note gives it: each integration and the "
        "proxy set their own (a command the shell agent types, a tool, the proxy's URL)",
    )
    token_safety_factor: float = Field(
        1.0, ge=1.0, description="scale counts for models whose tokenizer differs"
    )
    min_trim_tokens: int = Field(
        128, ge=16, description="smallest head/tail-trimmed observation worth keeping"
    )
    status_line_chars: int = Field(600, ge=80, description="cap of the TEST STATUS line")

    @model_validator(mode="before")
    @classmethod
    def _old_names(cls, data: Any) -> Any:
        """The settings of 0.2 under their new names, each with a warning that says the new one."""
        if not isinstance(data, dict) or not MOVED.keys() & data.keys():
            return data
        data = dict(data)
        for old in sorted(MOVED.keys() & data.keys()):
            group, new = MOVED[old]
            warnings.warn(
                f"setting {old!r} is now `{group}.{new}` (`-c {group}.{new}=...`, or `{new}:` under `{group}:` "
                "in YAML); the old name stops working in 0.4",
                FutureWarning,
                stacklevel=2,
            )
            nested = dict(data.get(group) or {})
            nested.setdefault(new, data.pop(old))
            data[group] = nested
        return data

    @field_validator("budget", mode="before")
    @classmethod
    def _budget_as_written(cls, value: Any) -> Any:
        """`budget: 8k` (or 8_000) reads as 8000, as `--budget` does."""
        return token_count(value) if isinstance(value, str) else value

    @field_validator("analyzer", "summarizer", "selector")
    @classmethod
    def _registered(cls, name: str, info: ValidationInfo) -> str:
        """An unknown component name fails at load, naming the setting and the valid names."""
        COMPONENTS[info.field_name or ""].check(name)
        return name


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply `key=value` (dotted keys for nesting; values parsed as YAML scalars)."""
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep:
            raise ConfigError(f"override {item!r} must look like key=value (e.g. -c window=8)")
        target = data
        *parents, leaf = key.strip().split(".")
        for part in parents:
            target = target.setdefault(part, {})
        target[leaf] = yaml.safe_load(raw)
    return data


def load_config(path: str | Path | None = None, overrides: list[str] | None = None) -> WeaverConfig:
    """Read a YAML config (optional), apply overrides, validate; errors name the file and the field."""
    data: dict[str, Any] = {}
    if path is not None:
        loaded = read_yaml(path) or {}
        if not isinstance(loaded, dict):
            raise ConfigError(f"{path}: expected a mapping of settings, got {type(loaded).__name__}")
        data = loaded.get("contextweaver", loaded)
    data = apply_overrides(dict(data), overrides or [])
    return validated(data, f"{path}: " if path else "")


def read_yaml(path: str | Path) -> Any:
    """A YAML file's content; an unreadable or malformed one is a ConfigError naming the file and line."""
    try:
        return yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the settings file ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not a text file (not UTF-8): give a YAML file of settings") from None
    except yaml.YAMLError as exc:
        raise ConfigError(yaml_problem(str(path), exc)) from None


def yaml_problem(name: str, exc: yaml.YAMLError) -> str:
    """`bad.yaml is not valid YAML (line 2, column 8: expected ...)`: the place, the problem, the fix."""
    mark = getattr(exc, "problem_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return (
        f"{name} is not valid YAML ({where}{problem}): fix that line; the file holds settings as "
        "`key: value` lines (e.g. `window: 5`, or nested under `contextweaver:`)"
    )


def validated(data: Mapping[str, Any], where: str = "") -> WeaverConfig:
    """`WeaverConfig` from plain settings; a bad one is a ConfigError naming `where` and each setting."""
    try:
        return WeaverConfig.model_validate(dict(data))
    except ValidationError as exc:
        raise ConfigError(f"{where}{described(exc, WeaverConfig)}") from None
