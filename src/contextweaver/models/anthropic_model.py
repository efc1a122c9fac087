"""Anthropic's Messages API via the `anthropic` SDK (optional extra: pip install 'contextweaver[anthropic]')."""

from __future__ import annotations

import json
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
from contextweaver.models.openai_compat import retry_after
from contextweaver.protocols import Completion
from contextweaver.tokens import content_text
from contextweaver.types import Message


class AnthropicModel(ModelClient):
    """Claude as the memory model. JSON is asked for in the prompt (plus the schema). No temperature is sent:
    this SDK's Messages API no longer takes one, so Claude's default sampling applies."""

    backend = "anthropic"

    def __init__(self, config: ModelConfig | None = None) -> None:
        super().__init__(config)
        import anthropic

        self._anthropic = anthropic
        self._client = anthropic.Anthropic(
            api_key=api_key_from_env(self.config, required=True),
            base_url=self.config.base_url,
            timeout=self.config.timeout,
            max_retries=0,
        )

    def _request(
        self, messages: list[Message], temperature: float, max_tokens: int, json_schema: dict[str, Any] | None
    ) -> Completion:
        system = "\n\n".join(content_text(m.get("content")) for m in messages if m.get("role") == "system")
        if json_schema is not None:
            system += "\n\nThe JSON object must follow this schema:\n" + json.dumps(json_schema)
        turns = [
            {
                "role": "assistant" if m.get("role") == "assistant" else "user",
                "content": content_text(m.get("content")),
            }
            for m in messages
            if m.get("role") != "system"
        ]
        try:
            reply = self._client.messages.create(
                model=self.config.model,
                system=system.strip(),
                messages=turns,  # type: ignore[arg-type]
                max_tokens=max_tokens,
            )
        except self._anthropic.APIError as exc:
            raise self._translate(exc) from None
        except (ValueError, TypeError) as exc:
            raise ModelResponseError(f"{self.name}: unreadable reply ({type(exc).__name__})") from None
        blocks = getattr(reply, "content", None)
        if not isinstance(blocks, list):
            raise ModelResponseError(f"{self.name}: reply has no content")
        text = "".join(getattr(b, "text", "") or "" for b in blocks)
        usage = getattr(reply, "usage", None)
        return Completion(
            text=text,
            prompt_tokens=int(getattr(usage, "input_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "output_tokens", 0) or 0),
            model=str(getattr(reply, "model", "") or self.config.model),
        )

    def _translate(self, exc: Exception) -> ModelError:
        a = self._anthropic
        where = f"{self.name} at {self.config.base_url or 'default endpoint'}"
        if isinstance(exc, a.APITimeoutError):
            return ModelTimeout(f"{where}: no reply within {self.config.timeout}s")
        if isinstance(exc, a.APIConnectionError):
            return ModelUnavailable(f"{where}: connection failed")
        if isinstance(exc, a.APIStatusError):
            status = exc.status_code
            error: ModelError
            if status in (429, 529) or status >= 500:
                error = ModelUnavailable(f"{where}: HTTP {status}")
                error.retry_after = retry_after(exc)
            else:
                error = ModelRequestError(f"{where}: HTTP {status}: {str(exc)[:300]}")
            return error
        return ModelResponseError(f"{where}: {type(exc).__name__}")
