"""The shell shared by models that wrap another (response cache, eval timer): same name, the inner
model's usage and seed, and requests passed on without overriding the inner model's temperature."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from contextweaver.models.usage import Usage, usage_of
from contextweaver.protocols import Completion, Model
from contextweaver.records import Message


class ModelWrapper:
    def __init__(self, inner: Model) -> None:
        self.inner = inner
        self.name = inner.name

    @property
    def usage(self) -> Usage | None:
        """The inner model's usage: its real calls, whatever the wrapper saved or added."""
        return usage_of(self.inner)

    @property
    def seed(self) -> int | None:
        return getattr(self.inner, "seed", None)

    def forward(
        self,
        messages: Sequence[Message],
        temperature: float | None,
        max_tokens: int | None,
        json_schema: dict[str, Any] | None,
    ) -> Completion:
        """Call the inner model; an unset temperature stays unset, so its configured one applies."""
        kwargs: dict[str, Any] = {"max_tokens": max_tokens, "json_schema": json_schema}
        if temperature is not None:
            kwargs["temperature"] = temperature
        return self.inner.complete(messages, **kwargs)
