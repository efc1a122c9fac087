"""Steps with real pytest -v output: a failing test later fixed, so the tracker supersedes a node."""

from __future__ import annotations

from contextweaver.records import Step

FAILING = """============================= test session starts ==============================
collected 2 items

tests/test_rounding.py::test_half_up FAILED                              [ 50%]
tests/test_rounding.py::test_totals PASSED                               [100%]

=========================== short test summary info ============================
FAILED tests/test_rounding.py::test_half_up - AssertionError: assert Decimal('2.67') == Decimal('2.68')
========================= 1 failed, 1 passed in 0.04s =========================="""

PASSING = """============================= test session starts ==============================
collected 2 items

tests/test_rounding.py::test_half_up PASSED                              [ 50%]
tests/test_rounding.py::test_totals PASSED                               [100%]

============================== 2 passed in 0.03s ==============================="""


def fix_cycle(tag: str = "") -> list[Step]:
    """Run the tests (one fails), edit, run again (all pass): the first run becomes superseded."""
    run = "python -m pytest -v tests/test_rounding.py"
    return [
        Step(thought=f"Run the rounding tests{tag}.", action=run, observation=FAILING),
        Step(
            thought="Round half up with Decimal.quantize.",
            action="sed -i 's/round(/quantize_half_up(/' ledgerlite/discounts.py",
            observation="",
        ),
        Step(thought=f"Run them again{tag}.", action=run, observation=PASSING),
    ]


def crash_steps(total: int) -> tuple[list[dict[str, str]], list[Step]]:
    """Root and `total` steps: the shipped example run, then fix cycles with distinct tags."""
    from contextweaver.examples import example_path
    from contextweaver.formats import load_trajectory

    run = load_trajectory(example_path("bugfix"))
    steps = list(run.steps)
    cycle = 0
    while len(steps) < total:
        cycle += 1
        steps += fix_cycle(f" (round {cycle})")
    return run.root, steps[:total]
