"""CTest: per-test lines with their outcomes and the closing percentage line."""

from contextweaver.records import TestStatus, ValidationStatus
from contextweaver.validation import TestTracker, parse_observation

FAILED_RUN = """\
Test project /home/dev/lib/build
    Start 1: math_basic
1/4 Test #1: math_basic .......................   Passed    0.01 sec
    Start 2: io_roundtrip
2/4 Test #2: io_roundtrip .....................***Failed    0.03 sec
    Start 3: net_fetch
3/4 Test #3: net_fetch ........................***Skipped   0.00 sec
    Start 4: slow_sort
4/4 Test #4: slow_sort ........................***Timeout  10.01 sec

50% tests passed, 2 tests failed out of 4

Total Test time (real) =  10.07 sec

The following tests FAILED:
\t  2 - io_roundtrip (Failed)
\t  4 - slow_sort (Timeout)
Errors while running CTest
"""


def test_outcomes_and_closing_line() -> None:
    report = parse_observation(FAILED_RUN, "ctest --output-on-failure")
    assert report is not None and report.runner == "ctest"
    assert report.tests == {
        "math_basic": TestStatus.PASSED,
        "io_roundtrip": TestStatus.FAILED,
        "net_fetch": TestStatus.SKIPPED,
        "slow_sort": TestStatus.FAILED,
    }
    assert report.totals == {"total": 4, "failed": 2}


def test_clean_run_passes_and_a_cut_run_is_unknown() -> None:
    clean = "1/1 Test #1: math_basic .......................   Passed    0.01 sec\n\n100% tests passed, 0 tests failed out of 1\n"
    assert TestTracker().observe(1, "ctest", clean).status is ValidationStatus.PASSED
    assert TestTracker().observe(1, "ctest", clean.split("\n\n")[0]).status is ValidationStatus.UNKNOWN
