"""What the SDK-backed clients (openai, anthropic) share: one guarded SDK call, usage read off the reply,
and the SDK's exceptions mapped to ours. Messages name the endpoint and status, never headers or keys."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from contextweaver.models.base import ModelClient
from contextweaver.models.errors import (
    ModelError,
    ModelRequestError,
    ModelResponseError,
    ModelTimeout,
    ModelUnavailable,
)
from contextweaver.protocols import Completion


def retry_after(exc: Any) -> float | None:
    """The server's Retry-After header in seconds, when it sent a numeric one."""
    response = getattr(exc, "response", None)
    raw = response.headers.get("retry-after") if response is not None else None
    try:
        return float(raw) if raw is not None else None
    except ValueError:
        return None


class SDKClient(ModelClient):
    """Subclasses set `_sdk` (the imported SDK module) and build `_client` with the SDK's retries off:
    `ModelClient` retries, so every retry is counted and bounded."""

    busy_statuses: frozenset[int] = frozenset({429})
    """HTTP statuses that mean "busy, try later" besides every 5xx."""
    invalid_reply_error: str | None = None
    """Name of the SDK's exception for a reply that is not a chat completion, when it has one worth naming."""
    _sdk: Any

    def _call_sdk(self, create: Callable[[], Any]) -> Any:
        try:
            return create()
        except self._sdk.APIError as exc:
            raise self._translate(exc) from None
        except (ValueError, TypeError) as exc:  # a 200 whose body is not JSON
            raise ModelResponseError(f"{self.name}: unreadable reply ({type(exc).__name__})") from None

    def _completion(self, reply: Any, text: str, prompt_field: str, completion_field: str) -> Completion:
        """The reply's text with the token counts the SDK reports under its own field names."""
        usage = getattr(reply, "usage", None)
        return Completion(
            text=text,
            prompt_tokens=int(getattr(usage, prompt_field, 0) or 0),
            completion_tokens=int(getattr(usage, completion_field, 0) or 0),
            model=str(getattr(reply, "model", "") or self.config.model),
        )

    def _translate(self, exc: Exception) -> ModelError:
        sdk = self._sdk
        where = f"{self.name} at {self.config.base_url or 'default endpoint'}"
        if isinstance(exc, sdk.APITimeoutError):
            return ModelTimeout(f"{where}: no reply within {self.config.timeout}s")
        if isinstance(exc, sdk.APIConnectionError):
            return ModelUnavailable(f"{where}: connection failed")
        if self.invalid_reply_error and isinstance(exc, getattr(sdk, self.invalid_reply_error)):
            return ModelResponseError(f"{where}: reply is not a chat completion")
        if isinstance(exc, sdk.APIStatusError):
            status = exc.status_code
            error: ModelError
            if status in self.busy_statuses or status >= 500:
                error = ModelUnavailable(f"{where}: HTTP {status}")
                error.retry_after = retry_after(exc)
            else:
                error = ModelRequestError(f"{where}: HTTP {status}: {str(exc)[:300]}")
            return error
        return ModelResponseError(f"{where}: {type(exc).__name__}")
