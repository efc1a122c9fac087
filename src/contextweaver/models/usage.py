"""Usage accounting: calls and prompt/completion tokens, in total and per agent step."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Tally:
    """Counts for one scope (the whole run, or one step)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    failures: int = 0
    retries: int = 0

    def as_dict(self) -> dict[str, int]:
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "failures": self.failures,
            "retries": self.retries,
        }


@dataclass
class Usage:
    """What a model client spent. Components set `step` before calling so costs land on the right step."""

    total: Tally = field(default_factory=Tally)
    per_step: dict[int, Tally] = field(default_factory=dict)
    step: int | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def _scopes(self) -> list[Tally]:
        scopes = [self.total]
        if self.step is not None:
            scopes.append(self.per_step.setdefault(self.step, Tally()))
        return scopes

    def record(self, prompt_tokens: int, completion_tokens: int) -> None:
        with self._lock:
            for tally in self._scopes():
                tally.calls += 1
                tally.prompt_tokens += prompt_tokens
                tally.completion_tokens += completion_tokens

    def record_failure(self) -> None:
        with self._lock:
            for tally in self._scopes():
                tally.failures += 1

    def record_retry(self) -> None:
        with self._lock:
            for tally in self._scopes():
                tally.retries += 1

    def report(self) -> dict[str, Any]:
        """A JSON-ready summary: totals and per-step tallies."""
        return {
            "total": self.total.as_dict(),
            "per_step": {k: t.as_dict() for k, t in sorted(self.per_step.items())},
        }


def usage_of(model: object) -> Usage | None:
    """The `Usage` of a model or of the model a wrapper holds (None for models that keep none)."""
    usage = getattr(model, "usage", None)
    return usage if isinstance(usage, Usage) else None


def at_step(model: object, step: int) -> None:
    """Attribute the next calls of `model` to agent step `step`."""
    usage = usage_of(model)
    if usage is not None:
        usage.step = step
