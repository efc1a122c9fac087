"""A short run of the parser fuzzer (the long run is benchmarks/fuzz_parsers.py)."""

import importlib.util
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("fuzz_parsers", ROOT / "benchmarks" / "fuzz_parsers.py")
assert spec and spec.loader
fuzz = importlib.util.module_from_spec(spec)
sys.modules["fuzz_parsers"] = fuzz
spec.loader.exec_module(fuzz)


@pytest.mark.parametrize("runner", sorted(fuzz.FRAGMENTS))
def test_no_exception_and_no_pass_with_a_failure_marker(runner: str) -> None:
    @settings(max_examples=40, deadline=None, database=None)
    @given(parts=fuzz.pieces(runner), failure_at=st.integers(0, 30), wrap=st.booleans())
    def prop(parts: list[str], failure_at: int, wrap: bool) -> None:
        fuzz.check(runner, parts, failure_at, wrap)

    prop()
