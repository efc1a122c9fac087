"""Validated configuration, checked once: YAML-loadable and overridable with `-c key=value`."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator


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


class WeaverConfig(BaseModel):
    """ContextWeaver's settings. Defaults follow the paper (W=5) and SPEC (m=3, heuristic analyzer);
    the selector defaults to `adaptive`, which beat the paper's `ancestry` on recall and tokens."""

    model_config = ConfigDict(extra="forbid")

    window: int = Field(5, ge=1, description="W: ancestors kept in full; also the warmup length")
    max_parents: int = Field(3, ge=1, description="m: parents per node (1 gives the tree variant)")
    analyzer: str = "heuristic"
    summarizer: str = "extractive"
    selector: str = "adaptive"
    """adaptive (measured best on the dev set), ancestry (the paper's BFS), frontier, recency."""
    llm_mode: Literal["three_call", "fused"] = "three_call"
    hybrid_top_c: int = Field(12, ge=1, description="C: candidates the LLM judges in hybrid mode")
    memory_model: ModelConfig = Field(default_factory=ModelConfig)
    budget: int | None = Field(None, ge=1, description="hard token budget for every woven context")
    drop_repeated_outputs: bool = Field(
        True, description="compress a kept step whose output lines all recur in a later kept output"
    )
    token_safety_factor: float = Field(
        1.0, ge=1.0, description="scale counts for models whose tokenizer differs"
    )
    min_trim_tokens: int = Field(
        128, ge=16, description="smallest head/tail-trimmed observation worth keeping"
    )
    select_weights: str | None = None
    """select: a weights JSON written by `contextweaver fit` (calibrated on your runs); None: the shipped one."""
    select_extra_tokens: int | None = Field(
        None,
        ge=0,
        description="select: tokens per context spent on excerpts of outputs older than W (None: the weights')",
    )
    select_excerpt_tokens: int | None = Field(
        None,
        ge=16,
        description="select: the most tokens one older output's excerpt may take (None: the weights')",
    )
    status_line_chars: int = Field(600, ge=80, description="cap of the prepended TEST STATUS line")
    working_state: bool = Field(
        True, description="a cut writes what it left out, the files changed and the failing tests after the root"
    )
    mode: Literal["lazy", "per_step"] = "lazy"
    """lazy: pass the history through until it crosses the high-water mark of the budget, then weave once
    down to the low-water mark and append unchanged again (the prefix stays byte-stable, so a provider's
    prompt cache keeps serving it); per_step: weave every context anew (the paper's Algorithm 1)."""
    high_water: float = Field(
        1.0,
        gt=0.0,
        le=1.0,
        description="lazy mode: weave when the context would exceed this share of the room above the root",
    )
    low_water: float = Field(
        0.85,
        gt=0.0,
        le=1.0,
        description="lazy mode: share of the room above the root the context is woven down to; lower when "
        "the gap to the high mark would not hold two mean steps (not below 0.7), else the high mark itself",
    )

    cut_calls_share: float = Field(
        0.3,
        ge=0.0,
        le=1.0,
        description="lazy mode: share of a cut's room held for older steps' calls before planned outputs",
    )

    @field_validator("select_weights")
    @classmethod
    def _weights_readable(cls, path: str | None) -> str | None:
        """A bad weights file fails when the settings are read, not in the middle of a run."""
        if path is not None:
            from contextweaver.selectors.select_settings import load_settings

            load_settings(path)
        return path

    @model_validator(mode="after")
    def _marks_in_order(self) -> WeaverConfig:
        if self.low_water > self.high_water:
            raise ValueError(
                f"low_water ({self.low_water}) must not exceed high_water ({self.high_water}): "
                "the context is woven down from the high mark to the low one"
            )
        return self

    def needs_model(self) -> bool:
        """Whether a configured component calls the memory model: each analyzer and summarizer class
        declares it (`uses_model`), so this is the one place the question is answered."""
        from contextweaver.analyzers import ANALYZERS
        from contextweaver.summaries import SUMMARIZERS

        return bool(ANALYZERS.get(self.analyzer).uses_model or SUMMARIZERS.get(self.summarizer).uses_model)


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply `key=value` (dotted keys for nesting; values parsed as YAML scalars)."""
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep:
            raise ValueError(f"override {item!r} must look like key=value")
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
        text = Path(path).read_text(encoding="utf-8")
        loaded = yaml.safe_load(text) or {}
        if not isinstance(loaded, dict):
            raise ValueError(f"{path}: expected a mapping of settings, got {type(loaded).__name__}")
        data = loaded.get("contextweaver", loaded)
    data = apply_overrides(dict(data), overrides or [])
    try:
        return WeaverConfig.model_validate(data)
    except ValidationError as exc:
        where = f"{path}: " if path else ""
        raise ValueError(f"{where}invalid configuration:\n{exc}") from None
