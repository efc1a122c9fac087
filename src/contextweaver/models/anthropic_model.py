"""Anthropic's Messages API via the `anthropic` SDK (optional extra: pip install 'contextweaver-agents[anthropic]')."""

from __future__ import annotations

import json
from typing import Any

from contextweaver.config import ModelConfig
from contextweaver.models.base import api_key_from_env
from contextweaver.models.errors import ModelResponseError
from contextweaver.models.sdk_client import SDKClient
from contextweaver.protocols import Completion
from contextweaver.records import Message
from contextweaver.tokens import content_text


class AnthropicModel(SDKClient):
    """Claude as the memory model. JSON is asked for in the prompt (plus the schema). No temperature is sent:
    this SDK's Messages API no longer takes one, so Claude's default sampling applies. It takes no seed
    either: a seed given here is kept (for reports) but not sent."""

    backend = "anthropic"
    busy_statuses = frozenset({429, 529})  # 529: overloaded

    def __init__(self, config: ModelConfig | None = None, *, seed: int | None = None) -> None:
        super().__init__(config, seed=seed)
        import anthropic

        self._sdk = anthropic
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
        reply = self._call_sdk(
            lambda: self._client.messages.create(
                model=self.config.model,
                system=system.strip(),
                messages=turns,  # type: ignore[arg-type]
                max_tokens=max_tokens,
            )
        )
        blocks = getattr(reply, "content", None)
        if not isinstance(blocks, list):
            raise ModelResponseError(f"{self.name}: reply has no content")
        text = "".join(getattr(b, "text", "") or "" for b in blocks)
        return self._completion(reply, text, "input_tokens", "output_tokens")
