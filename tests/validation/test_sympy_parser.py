"""sympy's bin/test: progress lines, failure blocks (failed vs exception), totals, clean files."""

from contextweaver.records import TestStatus, ValidationStatus
from contextweaver.validation import TestTracker, parse_observation

RUN = """\
============================= test process starts ==============================
executable:         /usr/bin/python3  (3.11.7-final-0) [CPython]
random seed:        12345

sympy/series/tests/test_order.py[12] ............                           [OK]
sympy/series/tests/test_limits.py[6] ..F.Ef                                [FAIL]

________________________________________________________________________________
______________ sympy/series/tests/test_limits.py:test_limit_at_oo ______________
Traceback (most recent call last):
  File "/repo/sympy/series/tests/test_limits.py", line 40, in test_limit_at_oo
    assert limit(f, x, oo) == 1
AssertionError
________________________________________________________________________________
 sympy/series/tests/test_limits.py:test_a_very_long_name_that_fills_the_whole_row_x
Traceback (most recent call last):
  File "/repo/sympy/series/tests/test_limits.py", line 52, in test_a_very_long_name
ValueError: bad order

== tests finished: 15 passed, 1 failed, 1 expected to fail, 1 exceptions, in 0.81 seconds ==
DO *NOT* COMMIT!
"""


def test_blocks_split_failed_from_exceptions_and_totals_use_project_names() -> None:
    report = parse_observation(RUN, "bin/test sympy/series")
    assert report is not None and report.runner == "sympy"
    assert report.tests == {
        "sympy/series/tests/test_limits.py::test_limit_at_oo": TestStatus.FAILED,
        "sympy/series/tests/test_limits.py::test_a_very_long_name_that_fills_the_whole_row_x": TestStatus.ERROR,
    }
    assert report.totals == {"passed": 15, "failed": 1, "xfail": 1, "error": 1}
    assert report.passed_scopes == frozenset({"sympy/series/tests/test_order.py"})


def test_missing_finish_line_is_incomplete() -> None:
    cut = RUN.split("== tests finished")[0]
    report = parse_observation(cut)
    assert report is not None and not report.complete and report.failed_signal


WRAPPED = """\
============================= test process starts ==============================
executable:         /usr/bin/python3  (3.11.7-final-0) [CPython]
sympy/polys/tests/test_rings.py[120] ........................................ [OK]
sympy/polys/tests/test_fields.py[40] ........................................ [OK]

 tests finished: 158 passed, 1 skipped, 1 expected to fail,
in 12.07 seconds
"""


def test_a_closing_line_wrapped_over_two_lines_is_read() -> None:
    report = parse_observation(WRAPPED, "bin/test sympy/polys")
    assert report is not None and report.complete
    assert report.totals == {"passed": 158, "skipped": 1, "xfail": 1}
    assert TestTracker().observe(1, "bin/test sympy/polys", WRAPPED).status is ValidationStatus.PASSED


VERBOSE = """\
============================= test process starts ==============================
sympy/core/tests/test_numbers.py[5]
test_integers ok
test_rationals F
test_floats E
test_known_bug f
test_needs_numpy  - s                                                       [FAIL]

________________________________________________________________________________
_______________ sympy/core/tests/test_numbers.py:test_rationals ________________
Traceback (most recent call last):
AssertionError
________________________________________________________________________________
_________________ sympy/core/tests/test_numbers.py:test_floats _________________
Traceback (most recent call last):
ZeroDivisionError: division by zero

= tests finished: 1 passed, 1 failed, 1 skipped, 1 expected to fail, 1 exceptions, in 0.52 seconds =
"""


def test_verbose_per_test_lines() -> None:
    report = parse_observation(VERBOSE, "bin/test --verbose sympy/core/tests/test_numbers.py")
    assert report is not None
    path = "sympy/core/tests/test_numbers.py::"
    assert report.tests == {
        path + "test_integers": TestStatus.PASSED,
        path + "test_rationals": TestStatus.FAILED,
        path + "test_floats": TestStatus.ERROR,
        path + "test_known_bug": TestStatus.XFAIL,
        path + "test_needs_numpy": TestStatus.SKIPPED,
    }
