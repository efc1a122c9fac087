"""Any OpenAI-compatible `/v1/chat/completions` endpoint (OpenAI, vLLM, llama.cpp server, Ollama) via the openai SDK."""

from __future__ import annotations

from typing import Any

from contextweaver.config import ModelConfig
from contextweaver.models.base import api_key_from_env
from contextweaver.models.errors import ModelResponseError
from contextweaver.models.sdk_client import SDKClient
from contextweaver.protocols import Completion
from contextweaver.records import Message

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


class OpenAICompatibleModel(SDKClient):
    """The seed, when the caller gives one, is sent as the API's `seed` (OpenAI, vLLM and llama.cpp honour it)."""

    backend = "openai"
    invalid_reply_error = "APIResponseValidationError"

    def __init__(self, config: ModelConfig | None = None, *, seed: int | None = None) -> None:
        super().__init__(config, seed=seed)
        import openai  # optional dependency: pip install 'contextweaver-agents[llm]'

        self._sdk = openai
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
        if self.seed is not None:
            kwargs["seed"] = self.seed
        reply = self._call_sdk(
            lambda: self._client.chat.completions.create(
                model=self.config.model,
                messages=messages,  # type: ignore[arg-type]
                temperature=temperature,
                max_tokens=max_tokens,
                **kwargs,
            )
        )
        choices = getattr(reply, "choices", None)
        message = getattr(choices[0], "message", None) if isinstance(choices, list) and choices else None
        if message is None:
            raise ModelResponseError(f"{self.name}: reply has no choices")
        return self._completion(
            reply, getattr(message, "content", None) or "", "prompt_tokens", "completion_tokens"
        )
