"""The shared shell of every model client: retries, circuit breaker, usage. Backends implement `_request`."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

from contextweaver.config import ModelConfig
from contextweaver.models.errors import MissingAPIKey, ModelError
from contextweaver.models.resilience import CircuitBreaker, call_with_retries
from contextweaver.models.usage import Usage
from contextweaver.protocols import Completion
from contextweaver.records import Message

log = logging.getLogger("contextweaver.models")


def api_key_from_env(config: ModelConfig, *, required: bool) -> str | None:
    """Read the key from the variable the config names. The key is returned, never logged or stored."""
    if config.api_key_env is None:
        if required:
            raise MissingAPIKey(
                f"backend {config.backend!r} needs an API key: set memory_model.api_key_env to the name of "
                "the environment variable that holds it"
            )
        return None
    value = os.environ.get(config.api_key_env, "").strip()
    if not value:
        raise MissingAPIKey(
            f"environment variable {config.api_key_env} is unset or empty; export the API key there"
        )
    return value


class ModelClient:
    """Template for backends: `complete` adds bounded retries, the breaker and usage around `_request`.

    `seed` is a run parameter, not a model setting: the eval harness replays the same config once per
    seed, and a backend that can sample reproducibly sends it."""

    backend = "base"

    def __init__(self, config: ModelConfig | None = None, *, seed: int | None = None) -> None:
        self.config = config or ModelConfig(backend=self.backend)
        self.seed = seed
        self.name = f"{self.backend}:{self.config.model}"
        self.usage = Usage()
        self.breaker = CircuitBreaker(self.config.breaker_threshold, self.config.breaker_cooldown)

    def __repr__(self) -> str:  # never shows a key: only backend, model and endpoint
        return f"{type(self).__name__}(model={self.config.model!r}, base_url={self.config.base_url!r})"

    def complete(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        json_schema: dict[str, Any] | None = None,
    ) -> Completion:
        """One chat completion. Raises a `ModelError` subclass when retries are exhausted or the circuit is open."""
        self.breaker.before_call()
        temp = self.config.temperature if temperature is None else temperature
        limit = max_tokens or self.config.max_tokens

        def on_retry(exc: ModelError) -> None:
            self.usage.record_retry()
            log.info("memory model %s: retrying after %s", self.name, type(exc).__name__)

        try:
            completion = call_with_retries(
                lambda: self._request(list(messages), temp, limit, json_schema),
                max_retries=self.config.max_retries,
                backoff=self.config.backoff,
                on_retry=on_retry,
            )
        except ModelError:
            self.breaker.record_failure()
            self.usage.record_failure()
            raise
        self.breaker.record_success()
        self.usage.record(completion.prompt_tokens, completion.completion_tokens)
        return completion

    def _request(
        self, messages: list[Message], temperature: float, max_tokens: int, json_schema: dict[str, Any] | None
    ) -> Completion:
        raise NotImplementedError
