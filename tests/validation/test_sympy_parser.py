"""sympy's bin/test: progress lines, failure blocks (failed vs exception), totals, clean files."""

from contextweaver.types import TestStatus
from contextweaver.validation import parse_observation

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
