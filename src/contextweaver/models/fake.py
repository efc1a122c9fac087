"""The deterministic fake backend ("fake"): real token counts, rule-based JSON, and a queue of canned replies."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable
from typing import Any

from contextweaver.config import ModelConfig
from contextweaver.models.base import ModelClient
from contextweaver.models.fake_rules import answer
from contextweaver.protocols import Completion
from contextweaver.records import Message
from contextweaver.tokens import content_text, count_message, count_text

Scripted = str | BaseException


class FakeModel(ModelClient):
    """Offline and repeatable. Scripted replies (strings, or exceptions to raise) are used first, in order;
    then the rules in `fake_rules` answer. Every request is kept in `requests` for tests to inspect.
    Built without a config it does not retry, so a scripted exception reaches the caller. The seed is
    recorded with each request but changes no answer: the fake has nothing to sample."""

    backend = "fake"

    def __init__(
        self, config: ModelConfig | None = None, replies: Iterable[Scripted] = (), *, seed: int | None = None
    ) -> None:
        super().__init__(config or ModelConfig(backend="fake", backoff=0.0, max_retries=0), seed=seed)
        self.script: deque[Scripted] = deque(replies)
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def push(self, *replies: Scripted) -> None:
        self.script.extend(replies)

    def _request(
        self, messages: list[Message], temperature: float, max_tokens: int, json_schema: dict[str, Any] | None
    ) -> Completion:
        with self._lock:
            self.requests.append(
                {
                    "messages": messages,
                    "json_schema": json_schema,
                    "max_tokens": max_tokens,
                    "seed": self.seed,
                }
            )
            scripted = self.script.popleft() if self.script else None
        if isinstance(scripted, BaseException):
            raise scripted
        if scripted is None:
            prompt = "\n".join(content_text(m.get("content")) for m in messages if m.get("role") == "user")
            scripted = answer(prompt, json_schema)
        return Completion(
            text=scripted,
            prompt_tokens=sum(count_message(m) for m in messages),
            completion_tokens=count_text(scripted),
            model=self.config.model,
        )
