"""A short run of the parser fuzzer (the long run is benchmarks/fuzz_parsers.py)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.validation.fuzz_inputs import FAILURES, FRAGMENTS, check, check_mixed, mixed_pieces, pieces


@pytest.mark.parametrize("runner", sorted(FRAGMENTS))
def test_no_exception_and_no_pass_with_a_failure_marker(runner: str) -> None:
    @settings(max_examples=40, deadline=None, database=None)
    @given(parts=pieces(runner), failure_at=st.integers(0, 30), wrap=st.booleans())
    def prop(parts: list[str], failure_at: int, wrap: bool) -> None:
        check(runner, parts, failure_at, wrap)

    prop()


@settings(max_examples=150, deadline=None, database=None)
@given(parts=mixed_pieces(), failing=st.sampled_from(sorted(FAILURES)), failure_at=st.integers(0, 30))
def test_one_runners_failure_is_never_hidden_by_another_runners_pass(
    parts: list[str], failing: str, failure_at: int
) -> None:
    check_mixed(parts, failing, failure_at)
