"""A model wrapper that adds up the wall time spent inside the model, so reports can tell LLM time
from the memory's own time."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from contextweaver.models.wrapper import ModelWrapper
from contextweaver.protocols import Completion, Model
from contextweaver.records import Message


class TimedModel(ModelWrapper):
    """Delegates to a model and adds up the seconds spent inside it."""

    def __init__(self, model: Model) -> None:
        super().__init__(model)
        self.seconds = 0.0

    def complete(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        json_schema: dict[str, Any] | None = None,
    ) -> Completion:
        start = time.perf_counter()
        try:
            return self.forward(messages, temperature, max_tokens, json_schema)
        finally:
            self.seconds += time.perf_counter() - start
