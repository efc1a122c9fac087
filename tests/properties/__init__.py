"""Property tests (hypothesis) of the weaving invariants, the trajectory readers and the proxy's parsers."""

from __future__ import annotations

import os

from hypothesis import settings


def sized(examples: int) -> settings:
    """`examples` per property; a fifth under HYPOTHESIS_PROFILE=fast (the fast lane), ten times as many
    under HYPOTHESIS_PROFILE=thorough, which alone draws new examples each run (tests/conftest.py). No deadline:
    a loaded machine must not fail a property."""
    profile = os.environ.get("HYPOTHESIS_PROFILE", "")
    scale = {"fast": 0.2, "thorough": 10.0}.get(profile, 1.0)
    return settings(
        max_examples=max(3, int(examples * scale)),
        deadline=None,
        database=None,
        derandomize=profile != "thorough",
    )
