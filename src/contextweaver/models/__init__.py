"""Memory-model clients: the only network in ContextWeaver. Backends are registered by name, imported lazily.

model = build_model(ModelConfig(backend="openai", model="gpt-4o-mini", api_key_env="OPENAI_API_KEY"))
"""

from __future__ import annotations

from contextweaver.config import ModelConfig
from contextweaver.models.base import ModelClient
from contextweaver.models.cache import CachedModel
from contextweaver.models.errors import (
    CircuitOpen,
    MissingAPIKey,
    ModelError,
    ModelRequestError,
    ModelResponseError,
    ModelTimeout,
    ModelUnavailable,
)
from contextweaver.models.timed import TimedModel
from contextweaver.models.usage import Tally, Usage, at_step, usage_of
from contextweaver.protocols import Model
from contextweaver.registry import Registry

MODELS = Registry(
    "model backend",
    {
        "openai": "contextweaver.models.openai_compat:OpenAICompatibleModel",
        "anthropic": "contextweaver.models.anthropic_model:AnthropicModel",
        "fake": "contextweaver.models.fake:FakeModel",
    },
)


def build_model(config: ModelConfig | None = None, *, seed: int | None = None) -> Model:
    """The client for `config.backend`, wrapped in the SQLite response cache when `cache_path` is set.

    `seed` goes to backends that sample reproducibly (openai-compatible); the cache keys on it too."""
    config = config or ModelConfig()
    backend = MODELS.get(config.backend)
    # a backend registered elsewhere may not take a seed: it is only asked to when there is one
    model: Model = backend(config) if seed is None else backend(config, seed=seed)
    if config.cache_path:
        model = CachedModel(model, config.cache_path)
    return model


def memory_model(config: ModelConfig | None = None, *, seed: int | None = None) -> TimedModel:
    """The one client all of a strategy's memory work shares (so retries, the circuit breaker and usage are
    shared), timed so reports can tell the model's time from the memory's own. Every builder calls this."""
    return TimedModel(build_model(config, seed=seed))


def require_model(model: Model | None, part: str) -> Model:
    """The LLM parts receive their memory model from whoever builds them (one client shared per
    strategy); building one of them without it is a programming error, said plainly."""
    if model is None:
        raise TypeError(f"{part} calls the memory model: pass model=build_model(config.memory_model)")
    return model


__all__ = [
    "memory_model",
    "MODELS",
    "CachedModel",
    "CircuitOpen",
    "MissingAPIKey",
    "ModelClient",
    "ModelError",
    "ModelRequestError",
    "ModelResponseError",
    "ModelTimeout",
    "ModelUnavailable",
    "Tally",
    "Usage",
    "at_step",
    "build_model",
    "require_model",
    "usage_of",
]
