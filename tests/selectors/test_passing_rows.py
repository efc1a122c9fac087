"""A kept test run drops its rows of passing tests and keeps its failures, tracebacks and summary."""

from __future__ import annotations

from tests.selectors.test_select import filler, weaver_with

from contextweaver.records import Step
from contextweaver.selectors.passing_rows import passing_rows

PYTEST_V = "\n".join(
    [
        "============================= test session starts ==============================",
        "collected 42 items",
        "",
        *[f"tests/test_shop.py::test_price_case_{i} PASSED{' ' * 8}[{i * 2:>3}%]" for i in range(40)],
        "tests/test_shop.py::test_discount_rounding FAILED                        [ 97%]",
        "tests/test_shop.py::test_currency[eur] SKIPPED (no locale)               [100%]",
        "",
        "=================================== FAILURES ===================================",
        "___________________________ test_discount_rounding ____________________________",
        "    def test_discount_rounding():",
        ">       assert apply_discount(10.005) == 10.01",
        "E       AssertionError: assert 10.0 == 10.01",
        "tests/test_shop.py:88: AssertionError",
        "=========================== short test summary info ============================",
        "FAILED tests/test_shop.py::test_discount_rounding - AssertionError: assert 10.0 == 10.01",
        "=================== 1 failed, 40 passed, 1 skipped in 0.52s ====================",
    ]
)
GO_V = "\n".join(
    [
        *[row for i in range(12) for row in (f"=== RUN   TestParse{i}", f"--- PASS: TestParse{i} (0.00s)")],
        "=== RUN   TestParseEmpty",
        "    parse_test.go:41: got 1 fields, want 0",
        "--- FAIL: TestParseEmpty (0.00s)",
        "FAIL",
        "FAIL\texample.com/parse\t0.012s",
    ]
)
JEST = "\n".join(
    [
        "FAIL src/cart.test.js",
        "  cart",
        *[f"    ✓ adds item {i} (3 ms)" for i in range(10)],
        "    ✕ removes the last item (5 ms)",
        "",
        "  ● cart › removes the last item",
        "    expect(received).toBe(expected)",
        "    Expected: 0",
        "    Received: 1",
        "      at Object.<anonymous> (src/cart.test.js:31:22)",
        "",
        "Tests:       1 failed, 10 passed, 11 total",
    ]
)


def cut(text: str) -> list[str]:
    """The lines a test run keeps once its passing rows are dropped."""
    lines = text.split("\n")
    passing = passing_rows(lines)
    return [line for n, line in enumerate(lines) if n not in passing]


def test_pytest_verbose_keeps_failures_traceback_skips_and_summary() -> None:
    kept = cut(PYTEST_V)
    assert not any(" PASSED" in line for line in kept)
    assert "tests/test_shop.py::test_discount_rounding FAILED                        [ 97%]" in kept
    assert any("SKIPPED" in line for line in kept)
    assert "E       AssertionError: assert 10.0 == 10.01" in kept
    assert kept[-1] == "=================== 1 failed, 40 passed, 1 skipped in 0.52s ===================="
    assert len(kept) == len(PYTEST_V.split("\n")) - 40


def test_go_verbose_keeps_the_failing_test_with_its_log() -> None:
    kept = cut(GO_V)
    assert kept == [
        "    parse_test.go:41: got 1 fields, want 0",
        "--- FAIL: TestParseEmpty (0.00s)",
        "FAIL",
        "FAIL\texample.com/parse\t0.012s",
    ]


def test_jest_keeps_the_failure_block_and_totals() -> None:
    kept = cut(JEST)
    assert not any("✓" in line for line in kept)
    assert "    ✕ removes the last item (5 ms)" in kept
    assert "      at Object.<anonymous> (src/cart.test.js:31:22)" in kept
    assert kept[-1] == "Tests:       1 failed, 10 passed, 11 total"


def test_progress_rows_with_a_failure_stay_and_a_few_rows_are_not_a_test_run() -> None:
    progress = ["tests/test_a.py " + "." * 60 + " [ 50%]"] * 9 + ["tests/test_b.py ....F... [100%]"]
    assert passing_rows(progress) == frozenset(range(9))
    assert passing_rows(progress[6:]) == frozenset()  # three rows: too few to be a verbose run
    code = ["    def f():", "        ...", "    x = y...z", "ok"] * 5
    assert passing_rows(code) == frozenset()


def test_a_recent_test_run_drops_passing_rows_but_the_current_one_stays_whole() -> None:
    steps = [*filler(6), Step("run the tests", "pytest -v tests", PYTEST_V), Step("look", "ls", "a")]
    weaver = weaver_with(steps)
    context = weaver.context()
    decision = next(d for d in context.decisions if d.index == 7)
    assert decision.mode == "trimmed" and "passing tests cut" in decision.reason
    assert decision.tokens < weaver.graph.node(7).full_tokens / 2
    text = context.text()
    assert "test_price_case_5 PASSED" not in text
    assert "[lines 4-43 cut, #7]" in text  # which lines, so the agent can print them again
    for line in ("E       AssertionError: assert 10.0 == 10.01", "1 failed, 40 passed, 1 skipped in 0.52s"):
        assert line in text

    weaver.add_step(Step("run again", "pytest -v tests", PYTEST_V.replace("0.52s", "0.61s")))
    current = weaver.context()
    assert next(d for d in current.decisions if d.index == 9).mode == "full"
    assert "test_price_case_5 PASSED" in current.text()


def test_an_older_excerpt_keeps_the_mentioned_row_without_padding_it_with_passing_ones() -> None:
    steps = [
        *filler(2),
        Step("run the tests", "go test -v ./parse", GO_V),
        *filler(6),
        Step("TestParse7 passes; why does TestParseEmpty fail?", "grep -n Empty parse.go", "no match"),
    ]
    context = weaver_with(steps).context()
    decision = next(d for d in context.decisions if d.index == 3)
    assert decision.mode == "trimmed"
    text = context.text()
    assert "--- FAIL: TestParseEmpty (0.00s)" in text and "--- PASS: TestParse7 (0.00s)" in text
    assert "--- PASS: TestParse6 (0.00s)" not in text and "=== RUN   TestParse8" not in text
