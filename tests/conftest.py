"""Shared fixtures: where the third-party data lives (read in place), and small step builders."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from contextweaver.prompt_cache import message_key
from contextweaver.records import Message
from contextweaver.tokens import count_message
from tests.shared_data import absent

# The README's test command and CI draw the same examples on every run (one verdict per commit); `thorough`
# explores with fresh random draws, on demand and before a stop, and each failure it finds is kept as an
# explicit `@example` of its property.
settings.register_profile("ci", derandomize=True, database=None, deadline=None)
settings.register_profile("fast", settings.get_profile("ci"), max_examples=10)  # the fast lane: a few each
settings.register_profile("thorough", max_examples=1000, deadline=None, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or "ci")

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
MINI_SWE_AGENT = SHARED_DATA / "trajectories" / "mini-swe-agent"


@pytest.fixture
def mini_swe_agent_files() -> list[Path]:
    files = sorted(MINI_SWE_AGENT.glob("*.traj.json"))
    if not files:
        pytest.skip(absent(MINI_SWE_AGENT))
    return files


def reference_cache(requests: list[list[Message]]) -> list[tuple[int, int]]:
    """(tokens, shared) per request: the longest prefix, in whole messages, of any earlier request."""
    seen: set[tuple[Any, ...]] = set()
    out = []
    for messages in requests:
        keys = tuple(message_key(m) for m in messages)
        total = shared = 0
        for end, message in enumerate(messages, start=1):
            total += count_message(message)
            if keys[:end] in seen and shared == total - count_message(message):
                shared = total
        seen.update(keys[:end] for end in range(1, len(keys) + 1))
        out.append((total, shared))
    return out
