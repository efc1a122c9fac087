"""What a loaded session costs a weaving process, in bytes: the one estimate its session cache is bounded by.

A session holds its root (system prompt, task) and its steps several times over: the request's messages,
the store's copy of the root, the nodes' text, token counts, line hashes, the prompt-cache simulation's
message keys, and for the per-step selection its excerpt indexes. How many times depends on the strategy,
so the multipliers are measured per strategy, in one table.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from contextweaver.config import WeaverConfig
from contextweaver.records import Message, Step


@dataclass(frozen=True)
class Multipliers:
    """Retained bytes per character of text (ASCII text: one byte a character in a Python str)."""

    root: float
    step: float
    per_step: int
    """Bytes of a step beyond its text (node, annotation, digests, indexes), whatever its size."""


MEASURED: dict[str, Multipliers] = {
    "cw": Multipliers(root=3.3, step=4.6, per_step=10_100),
    "cw-select": Multipliers(root=3.3, step=9.1, per_step=64_000),
    "cw-paper": Multipliers(root=3.3, step=5.7, per_step=10_900),
}
"""Measured by `python benchmarks/session_bytes.py` (tracemalloc of a weaving process's whole state after
each session: its sessions, prompt-cache simulations and kept histories), rounded up. A configuration
that is none of these is charged the largest of each."""
ROOT_OVERHEAD = 16 * 1024
"""Bytes of a session beyond its root's and steps' text (weaver, graph, simulation, store handles)."""
WORST = Multipliers(
    *(max(getattr(m, name) for m in MEASURED.values()) for name in ("root", "step", "per_step"))
)


def multipliers(config: WeaverConfig) -> Multipliers:
    """The measured multipliers of the strategy `config` is (mode, selector and analyzer decide), else the
    largest of each."""
    return _by_settings().get((config.mode, config.selector, config.analyzer), WORST)


@cache
def _by_settings() -> dict[tuple[str, str, str], Multipliers]:
    from contextweaver.strategies import TABLE

    found: dict[tuple[str, str, str], Multipliers] = {}
    for name, measured in MEASURED.items():
        fixed = WeaverConfig.model_validate(dict(TABLE[name].weaver))
        found.setdefault((fixed.mode, fixed.selector, fixed.analyzer), measured)
    return found


def text_length(messages: Iterable[Message]) -> int:
    """Characters of the messages' contents and tool calls (a list of parts counts as its JSON)."""
    total = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            total += len(content)
        elif content is not None:
            total += len(json.dumps(content, default=str))
        calls = message.get("tool_calls")
        if calls:
            total += len(json.dumps(calls, default=str))
    return total


def root_bytes(root: Iterable[Message], rates: Multipliers) -> int:
    return int(rates.root * text_length(root)) + ROOT_OVERHEAD


def step_bytes(step: Step, rates: Multipliers) -> int:
    return int(rates.step * (len(step.observation) + len(step.thought) + len(step.action))) + rates.per_step


DEFAULT_BOUND = 512 * 1024 * 1024
"""Bytes of sessions one weaving process keeps (`contextweaver serve --session-cache-mb`)."""
HISTORIES_MAX = 64 * 1024 * 1024


def shares(bound: int) -> tuple[int, int]:
    """A weaving process's bound shared out: (its session cache, its kept request histories)."""
    histories = min(HISTORIES_MAX, bound // 8)
    return bound - histories, histories
