"""A short run of the parser fuzzer (the long run is benchmarks/fuzz_parsers.py)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextweaver.records import Step
from contextweaver.weaver import ContextWeaver
from tests.validation.adversarial import shapes
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


HOSTILE_PIECES = st.sampled_from(
    [
        "9" * 5000,
        "<returncode>" + "9" * 5000 + "</returncode>",
        '{"Time":"t","Action":"pass","Package":"p","Test":"T\\q"}',
        '{"Time":"t","Action":"fail","Package":"p","Test":"T\\ud800"}',
        '{"test":{"id":1,"name":"x\\q","suiteID":0},"type":"testStart"}',
        " passed in 0.1s =====",
        "\n" * 200,
        "-" * 500,
    ]
)


@settings(max_examples=60, deadline=None, database=None)
@given(
    parts=st.lists(st.one_of(mixed_pieces().map("".join), HOSTILE_PIECES), max_size=12),
    runner=st.sampled_from(sorted(FRAGMENTS)),
)
def test_every_fuzzed_output_is_stored_and_the_next_step_woven(parts: list[str], runner: str) -> None:
    """The whole add_step path, not only the parsers: the fuzzed step is a node, and so is the next."""
    weaver = ContextWeaver()
    weaver.begin([{"role": "user", "content": "fix the tests"}])
    text = "".join(parts)
    weaver.add_step(Step("run the tests", f"{runner} {text[:200]}", text))
    weaver.add_step(Step("look", "cat a.py", "def after_the_fuzz(): pass"))
    assert len(weaver.nodes) == 3
    assert "after_the_fuzz" in weaver.context().text()


def test_every_adversarial_shape_goes_through_add_step() -> None:
    """Each hostile parser shape (tests/validation/adversarial.py), small, as a step's output and action."""
    weaver = None
    for count, (name, text) in enumerate(shapes(2_000)):
        if count % 50 == 0:
            weaver = ContextWeaver()
            weaver.begin([{"role": "user", "content": "fix the tests"}])
        assert weaver is not None
        node = weaver.add_step(Step("run", text[:500], text))
        assert node.index == len(weaver.nodes) - 1, name
    assert weaver is not None and weaver.context().tokens > 0
