"""Any OpenAI-compatible `/v1/chat/completions` endpoint (OpenAI, vLLM, llama.cpp server, Ollama) via the openai SDK."""

from __future__ import annotations

from typing import Any

from contextweaver.config import ModelConfig
from contextweaver.models.base import ModelClient, api_key_from_env
from contextweaver.models.errors import (
    ModelError,
    ModelRequestError,
    ModelResponseError,
    ModelTimeout,
    ModelUnavailable,
)
from contextweaver.protocols import Completion
from contextweaver.types import Message

NO_KEY = "no-key"
"""Sent when the config names no key variable: local servers ignore it, and the SDK insists on one."""


def response_format(kind: str, schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """The `response_format` field for the configured JSON mode (servers differ in what they accept)."""
    if schema is None or kind == "none":
        return None
    if kind == "json_object":
        return {"type": "json_object"}
    if kind == "json_object_schema":  # llama.cpp's extension: grammar-constrained to the schema
        return {"type": "json_object", "schema": schema}
    name = str(schema.get("title", "reply"))
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}


def retry_after(exc: Any) -> float | None:
    response = getattr(exc, "response", None)
    raw = response.headers.get("retry-after") if response is not None else None
    try:
        return float(raw) if raw is not None else None
    except ValueError:
        return None


class OpenAICompatibleModel(ModelClient):
    """The SDK's own retries are off: `ModelClient` retries, so every retry is counted and bounded."""

    backend = "openai"

    def __init__(self, config: ModelConfig | None = None) -> None:
        super().__init__(config)
        import openai  # optional dependency: pip install 'contextweaver[llm]'

        self._openai = openai
        self._client = openai.OpenAI(
            api_key=api_key_from_env(self.config, required=False) or NO_KEY,
            base_url=self.config.base_url,
            timeout=self.config.timeout,
            max_retries=0,
        )

    def _request(
        self, messages: list[Message], temperature: float, max_tokens: int, json_schema: dict[str, Any] | None
    ) -> Completion:
        kwargs: dict[str, Any] = {}
        fmt = response_format(self.config.response_format, json_schema)
        if fmt is not None:
            kwargs["response_format"] = fmt
        try:
            reply = self._client.chat.completions.create(
                model=self.config.model,
                messages=messages,  # type: ignore[arg-type]
                temperature=temperature,
                max_tokens=max_tokens,
                **kwargs,
            )
        except self._openai.APIError as exc:
            raise self._translate(exc) from None
        except (ValueError, TypeError) as exc:  # a 200 whose body is not JSON
            raise ModelResponseError(f"{self.name}: unreadable reply ({type(exc).__name__})") from None
        choices = getattr(reply, "choices", None)
        message = getattr(choices[0], "message", None) if isinstance(choices, list) and choices else None
        if message is None:
            raise ModelResponseError(f"{self.name}: reply has no choices")
        text = getattr(message, "content", None) or ""
        usage = getattr(reply, "usage", None)
        return Completion(
            text=text,
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            model=str(getattr(reply, "model", "") or self.config.model),
        )

    def _translate(self, exc: Exception) -> ModelError:
        """Map SDK errors to ours; messages name the endpoint and status, never headers or keys."""
        o = self._openai
        where = f"{self.name} at {self.config.base_url or 'default endpoint'}"
        if isinstance(exc, o.APITimeoutError):
            return ModelTimeout(f"{where}: no reply within {self.config.timeout}s")
        if isinstance(exc, o.APIConnectionError):
            return ModelUnavailable(f"{where}: connection failed")
        if isinstance(exc, o.APIResponseValidationError):
            return ModelResponseError(f"{where}: reply is not a chat completion")
        if isinstance(exc, o.APIStatusError):
            status = exc.status_code
            error: ModelError
            if status == 429 or status >= 500:
                error = ModelUnavailable(f"{where}: HTTP {status}")
                error.retry_after = retry_after(exc)
            else:
                error = ModelRequestError(f"{where}: HTTP {status}: {str(exc)[:300]}")
            return error
        return ModelResponseError(f"{where}: {type(exc).__name__}")
