"""Metric labels from values the callers choose (model names, API keys), kept to a bounded set.

A Prometheus series per distinct label value lives as long as the process: a caller sending a new model
name (or key) with every request would grow /metrics and the operator's database without end. So at most `limit`
values get a label of their own and everything else is "other": the first `limit // 2` as they come (a
healthy proxy's few models and agents' keys are named from their first request), the rest only once a
value has come `admit_after` times, so a flood of one-off values cannot take the slots a frequent value
arriving later needs. Candidates are counted in a table of at most `candidates` entries, cleared of the
values seen once when it fills, so hostile values cost bounded memory too.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

OTHER = "other"
MAX_CHARS = 64


@dataclass(frozen=True)
class Named:
    """A request's labels, resolved once: the provider (the API its wire speaks), the model and the owner
    as labels, and the model as asked for (the price table reads it)."""

    provider: str
    model: str
    owner: str
    model_name: str = ""


def provider_of(wire: str) -> str:
    """`gen_ai.provider.name` for a wire: the API dialect (an OpenAI-compatible server is "openai")."""
    return "anthropic" if wire in ("messages", "anthropic") else "openai"


class BoundedLabel:
    def __init__(self, limit: int = 20, admit_after: int = 3, candidates: int = 1000) -> None:
        self.limit = limit
        self.admit_after = admit_after
        self.candidates = candidates
        self.admitted: set[str] = set()
        self.counts: dict[str, int] = {}
        self.lock = threading.Lock()

    def __call__(self, value: str | None) -> str:
        """The label for `value`: itself once admitted, else "other" ("none" for no value)."""
        if not value:
            return "none"
        value = "".join(c for c in value[:MAX_CHARS] if c.isprintable())
        with self.lock:
            if value in self.admitted:
                return value
            if len(self.admitted) >= self.limit:
                return OTHER
            count = self.counts.get(value, 0) + 1
            if count >= self.admit_after or len(self.admitted) < self.limit // 2:
                self.admitted.add(value)
                self.counts.pop(value, None)
                return value
            if len(self.counts) >= self.candidates:
                self.counts = {v: n for v, n in self.counts.items() if n > 1}
                if len(self.counts) >= self.candidates:
                    self.counts.clear()
            self.counts[value] = count
            return OTHER
