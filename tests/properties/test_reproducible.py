"""The README's test command gives one verdict per commit: its property tests draw the same examples each run."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.properties import sized
from tests.properties.runs import run_steps

pytestmark = pytest.mark.property


def _drawn() -> list[str]:
    seen: list[str] = []

    @sized(10)
    @given(steps=run_steps(max_steps=3))
    def draw(steps: list) -> None:
        seen.append(repr(steps))

    draw()
    return seen


@pytest.mark.skipif(os.environ.get("HYPOTHESIS_PROFILE") == "thorough", reason="thorough draws anew each run")
def test_two_runs_draw_the_same_examples() -> None:
    assert _drawn() == _drawn()


@pytest.mark.skipif(os.environ.get("HYPOTHESIS_PROFILE") == "thorough", reason="thorough draws anew each run")
def test_a_plain_settings_decorator_draws_the_same_examples() -> None:
    """Tests with their own `@settings` (the parsers' fuzz tests) inherit the suite's profile."""
    assert _integers() == _integers()


def _integers() -> list[int]:
    seen: list[int] = []

    @given(st.integers())
    def draw(value: int) -> None:
        seen.append(value)

    draw()
    return seen
