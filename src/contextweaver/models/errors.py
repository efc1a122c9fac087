"""Errors of the model layer: callers catch `ModelError` and fall back; nothing here carries an API key."""

from __future__ import annotations

from contextweaver.errors import ContextWeaverError


class ModelError(ContextWeaverError, RuntimeError):
    """A model call failed after its bounded retries (the analyzers count it and fall back)."""

    retryable = False
    retry_after: float | None = None
    """Seconds the server asked us to wait (HTTP Retry-After), honoured up to a cap."""


class ModelTimeout(ModelError):
    """The server did not answer within the configured timeout."""

    retryable = True


class ModelUnavailable(ModelError):
    """Connection refused, rate limited (429) or a server error (5xx): worth a retry after a pause."""

    retryable = True


class ModelRequestError(ModelError):
    """The server rejected the request (4xx other than 429): retrying the same request cannot help."""


class ModelResponseError(ModelError):
    """The server answered with something that is not a chat completion (garbage body, no choices)."""

    retryable = True


class CircuitOpen(ModelError):
    """Too many consecutive failures: calls are refused until the cooldown ends (no network touched)."""


class MissingAPIKey(ModelError):
    """The environment variable named in the config is unset or empty."""
