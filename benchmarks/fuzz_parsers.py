"""Fuzz every parser: random mixes of runner lines and noise must never raise, and an output holding a
runner's failure marker must never be labelled passed, also when other runners' lines surround it.

Run: PYTHONPATH=src:. .venv/bin/python benchmarks/fuzz_parsers.py --seconds 120
"""

from __future__ import annotations

import argparse
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.validation.fuzz_inputs import FAILURES, FRAGMENTS, check, check_mixed, mixed_pieces, pieces

EXAMPLES = 200


def property_for(runner: str):  # type: ignore[no-untyped-def]
    """One hypothesis property per runner (a factory, since @given rejects default arguments)."""

    @settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(parts=pieces(runner), failure_at=st.integers(0, 30), wrap=st.booleans())
    def prop(parts: list[str], failure_at: int, wrap: bool) -> None:
        check(runner, parts, failure_at, wrap)

    return prop


@settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(parts=mixed_pieces(), failing=st.sampled_from(sorted(FAILURES)), failure_at=st.integers(0, 30))
def cross_runner(parts: list[str], failing: str, failure_at: int) -> None:
    check_mixed(parts, failing, failure_at)


def run(seconds: float) -> tuple[int, int]:
    single = mixed = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for runner in FRAGMENTS:
            property_for(runner)()
            single += EXAMPLES
        cross_runner()
        mixed += EXAMPLES
    return single, mixed


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60)
    single, mixed = run(parser.parse_args().seconds)
    print(
        f"ok: {single} single-runner and {mixed} cross-runner examples over {len(FRAGMENTS)} parsers, "
        "no exception, no pass with a failure marker"
    )
