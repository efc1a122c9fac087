"""pytest output in its common shapes: -v, -rA, -q, xdist, collection errors, nested pytester runs."""

from contextweaver.records import TestStatus, ValidationStatus
from contextweaver.validation import TestTracker, parse_observation

VERBOSE = """\
============================= test session starts ==============================
platform linux -- Python 3.11.7, pytest-8.1.1, pluggy-1.4.0
collected 5 items

tests/test_cart.py::test_total PASSED                                   [ 20%]
tests/test_cart.py::test_discount[10 - off] FAILED                      [ 40%]
tests/test_cart.py::TestTax::test_rate SKIPPED (no network)             [ 60%]
tests/test_cart.py::test_rounding XFAIL (float issue)                   [ 80%]
tests/test_cart.py::test_legacy XPASS                                   [100%]

=========================== short test summary info ============================
FAILED tests/test_cart.py::test_discount[10 - off] - AssertionError: assert 9 == 10
==== 1 failed, 1 passed, 1 skipped, 1 xfailed, 1 xpassed in 0.31s ====
"""


def test_verbose_lines_give_every_status_and_parametrized_ids_keep_spaces() -> None:
    report = parse_observation(VERBOSE, "pytest -v")
    assert report is not None and report.runner == "pytest"
    assert report.tests == {
        "tests/test_cart.py::test_total": TestStatus.PASSED,
        "tests/test_cart.py::test_discount[10 - off]": TestStatus.FAILED,
        "tests/test_cart.py::TestTax::test_rate": TestStatus.SKIPPED,
        "tests/test_cart.py::test_rounding": TestStatus.XFAIL,
        "tests/test_cart.py::test_legacy": TestStatus.XPASS,
    }
    assert report.totals == {"failed": 1, "passed": 1, "skipped": 1, "xfail": 1, "xpass": 1}
    assert report.complete and report.failed_signal


def test_ra_summary_lines_and_quiet_summary_without_header() -> None:
    text = "..F.\nPASSED tests/test_io.py::test_read\nFAILED tests/test_io.py::test_write - OSError\n"
    text += "1 failed, 3 passed in 0.05s\n"
    report = parse_observation(text, "pytest -q -rA")
    assert report is not None
    assert report.tests["tests/test_io.py::test_write"] is TestStatus.FAILED
    assert report.tests["tests/test_io.py::test_read"] is TestStatus.PASSED
    assert report.totals == {"failed": 1, "passed": 3}


def test_collection_error_is_an_error_and_interrupts() -> None:
    text = """\
============================= test session starts ==============================
collected 0 items / 1 error

==================================== ERRORS ====================================
___________________ ERROR collecting tests/test_broken.py ______________________
ImportError while importing test module '/repo/tests/test_broken.py'.
=========================== short test summary info ============================
ERROR tests/test_broken.py
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
=============================== 1 error in 0.12s ===============================
"""
    report = parse_observation(text, "pytest")
    assert report is not None
    assert report.tests == {"tests/test_broken.py": TestStatus.ERROR}
    assert report.totals == {"error": 1} and report.failed_signal


def test_xdist_verbose_lines() -> None:
    text = "[gw0] [ 50%] PASSED tests/test_a.py::test_one \n[gw1] [100%] FAILED tests/test_a.py::test_two \n"
    text += "========= 1 failed, 1 passed in 1.02s =========\n"
    report = parse_observation(text, "pytest -n 2 -v")
    assert report is not None
    assert report.tests == {
        "tests/test_a.py::test_one": TestStatus.PASSED,
        "tests/test_a.py::test_two": TestStatus.FAILED,
    }


def test_sessions_printed_inside_a_failure_report_stay_nested() -> None:
    inner = "============================= test session starts ==============================\n"
    inner += "inner/test_x.py::test_inner PASSED\n======= 1 passed in 0.01s =======\n"
    text = (
        "============================= test session starts ==============================\n"
        "tests/test_plugin.py::test_runs_inner FAILED\n"
        "=================================== FAILURES ===================================\n"
        "----------------------------- Captured stdout call -----------------------------\n"
        + inner
        + "=========================== 1 failed in 0.20s ============================\n"
    )
    report = parse_observation(text, "pytest -v")
    assert report is not None
    assert report.tests == {"tests/test_plugin.py::test_runs_inner": TestStatus.FAILED}
    assert report.totals == {"failed": 1} and report.complete and report.runs == 1


def test_two_runs_merge_later_wins_and_totals_add() -> None:
    run = "============================= test session starts ==============================\n"
    first = run + "t.py::test_a FAILED\n==== 1 failed in 0.1s ====\n"
    second = run + "t.py::test_a PASSED\n==== 1 passed in 0.1s ====\n"
    report = parse_observation(first + second, "pytest -v t.py; pytest -v t.py")
    assert report is not None
    assert report.tests == {"t.py::test_a": TestStatus.PASSED}
    assert report.totals == {"failed": 1, "passed": 1} and report.runs == 2


def test_unittest_failed_line_is_not_a_pytest_test() -> None:
    report = parse_observation("Ran 3 tests in 0.01s\n\nFAILED (failures=1)\n")
    assert report is not None and report.runner == "unittest"
    assert report.tests == {}


RA_WITH_PYTESTER = """\
============================= test session starts ==============================
collected 3 items

testing/test_outcomes.py ...                                             [100%]

==================================== PASSES ====================================
_________________________ test_inner_failure_is_reported _______________________
----------------------------- Captured stdout call -----------------------------
============================= test session starts ==============================
platform linux -- Python 3.11.7, pytest-8.0.0, pluggy-1.4.0
rootdir: /tmp/pytest-of-dev/pytest-3/test_inner_failure_is_reported0
collected 2 items

test_inner_failure_is_reported.py .F                                      [100%]

=================================== FAILURES ===================================
____________________________________ test_b ____________________________________
E       assert 0
=========================== short test summary info ============================
FAILED test_inner_failure_is_reported.py::test_b - assert 0
========================= 1 failed, 1 passed in 0.02s ==========================
=========================== short test summary info ============================
PASSED testing/test_outcomes.py::test_inner_failure_is_reported
PASSED testing/test_outcomes.py::test_counts
PASSED testing/test_outcomes.py::test_durations
============================== 3 passed in 0.41s ===============================
"""


def test_sessions_printed_in_the_passes_section_are_not_runs_of_their_own() -> None:
    verdict = TestTracker().observe(1, "pytest -rA testing/test_outcomes.py", RA_WITH_PYTESTER)
    assert verdict.status is ValidationStatus.PASSED
    assert verdict.report is not None and verdict.report.totals == {"passed": 3}
    assert set(verdict.results) == {
        "testing/test_outcomes.py::test_inner_failure_is_reported",
        "testing/test_outcomes.py::test_counts",
        "testing/test_outcomes.py::test_durations",
    }


PRETTY = """\
============================= test session starts ==============================
plugins: pretty-1.2.0
collected 171 items

tests/test_models.py ..................................................  [ 29%]
tests/test_views.py ....................................................s [100%]

Results (0.77s):
       170 passed
         1 skipped
"""


def test_pytest_pretty_results_block_closes_the_run() -> None:
    report = parse_observation(PRETTY, "pytest tests")
    assert report is not None and report.complete
    assert report.totals == {"passed": 170, "skipped": 1}
    failing = PRETTY.replace("       170 passed\n", "       168 passed\n         2 failed\n")
    assert TestTracker().observe(1, "pytest", failing).status is ValidationStatus.FAILED


def test_xdist_worker_prefixes() -> None:
    text = """\
============================= test session starts ==============================
created: 2/2 workers
2 workers [3 items]

[gw0] [ 33%] PASSED tests/test_io.py::test_reads
[gw1] [ 66%] FAILED tests/test_io.py::test_writes
[gw0] [100%] SKIPPED tests/test_io.py::test_remote
=========================== short test summary info ============================
FAILED tests/test_io.py::test_writes - OSError: disk full
=================== 1 failed, 1 passed, 1 skipped in 1.20s ====================
"""
    report = parse_observation(text, "pytest -n 2 -v tests")
    assert report is not None
    assert report.tests == {
        "tests/test_io.py::test_reads": TestStatus.PASSED,
        "tests/test_io.py::test_writes": TestStatus.FAILED,
        "tests/test_io.py::test_remote": TestStatus.SKIPPED,
    }


UNCLOSED_NESTED = """\
============================= test session starts ==============================
collected 1 item

testing/test_nodes.py F                                                  [100%]

=================================== FAILURES ===================================
__________________________ test_collects_package_file __________________________
>       node = testdir.getnode(config, path)
E       IndexError: list index out of range
----------------------------- Captured stdout call -----------------------------
============================= test session starts ==============================
rootdir: /tmp/pytest-of-dev/pytest-7/test_collects_package_file0
collected 0 items / 1 errors
=========================== short test summary info ============================
FAILED testing/test_nodes.py::test_collects_package_file - IndexError: list...
============================== 1 failed in 0.21s ===============================
"""


def test_the_last_closing_line_closes_the_outer_run_when_a_nested_session_never_closed() -> None:
    verdict = TestTracker().observe(1, "pytest testing/test_nodes.py", UNCLOSED_NESTED)
    assert verdict.status is ValidationStatus.FAILED
    assert verdict.report is not None and verdict.report.totals == {"failed": 1}
