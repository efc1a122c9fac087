"""unittest: verbose lines, FAIL:/ERROR: headers (old and 3.11 forms), Ran N + OK/FAILED, truncation."""

from contextweaver.records import TestStatus
from contextweaver.validation import parse_observation

VERBOSE = """\
test_add (calc.tests.TestCalc) ... ok
test_div (calc.tests.TestCalc)
Division by zero raises. ... ERROR
test_mul (calc.tests.TestCalc.test_mul) ... FAIL
test_pow (calc.tests.TestCalc) ... skipped 'slow'
test_neg (calc.tests.TestCalc) ... expected failure

======================================================================
ERROR: test_div (calc.tests.TestCalc)
----------------------------------------------------------------------
Traceback (most recent call last):
ZeroDivisionError: division by zero

======================================================================
FAIL: test_mul (calc.tests.TestCalc.test_mul)
----------------------------------------------------------------------
AssertionError: 6 != 5

----------------------------------------------------------------------
Ran 5 tests in 0.004s

FAILED (failures=1, errors=1, skipped=1, expected failures=1)
"""


def test_verbose_run_with_docstring_and_both_id_forms() -> None:
    report = parse_observation(VERBOSE, "python -m unittest -v calc.tests")
    assert report is not None and report.runner == "unittest"
    assert report.tests == {
        "calc.tests.TestCalc.test_add": TestStatus.PASSED,
        "calc.tests.TestCalc.test_div": TestStatus.ERROR,
        "calc.tests.TestCalc.test_mul": TestStatus.FAILED,
        "calc.tests.TestCalc.test_pow": TestStatus.SKIPPED,
        "calc.tests.TestCalc.test_neg": TestStatus.XFAIL,
    }
    assert report.totals == {"total": 5, "failed": 1, "error": 1, "skipped": 1, "xfail": 1}
    assert report.complete and report.failed_signal


def test_headers_without_closing_line_are_incomplete_failures() -> None:
    text = "EE.\n" + "=" * 70 + "\nERROR: test_get (client.tests.Api)\n" + "-" * 70 + "\nTraceback (most"
    report = parse_observation(text)
    assert report is not None
    assert report.tests == {"client.tests.Api.test_get": TestStatus.ERROR}
    assert not report.complete and report.failed_signal


def test_ok_with_skips() -> None:
    report = parse_observation("....s\n" + "-" * 70 + "\nRan 5 tests in 0.100s\n\nOK (skipped=1)\n")
    assert report is not None
    assert report.totals == {"total": 5, "skipped": 1} and not report.failed_signal


INTERLEAVED = """\
test_connects (net.tests.ClientTest) ... DEBUG:net.client:opening socket to 127.0.0.1:8080
DEBUG:net.client:handshake done
ok
test_retries (net.tests.ClientTest) ... test_times_out (net.tests.ClientTest) ... WARNING:net.client:retry 1
FAIL
ok
test_closes (net.tests.ClientTest) ... ok

======================================================================
FAIL: test_retries (net.tests.ClientTest)
----------------------------------------------------------------------
AssertionError: 2 != 3

----------------------------------------------------------------------
Ran 4 tests in 0.310s

FAILED (failures=1)
"""


def test_a_status_apart_from_its_test_is_paired_in_order() -> None:
    report = parse_observation(INTERLEAVED, "python -m unittest -v net.tests")
    assert report is not None
    assert report.tests == {
        "net.tests.ClientTest.test_connects": TestStatus.PASSED,
        "net.tests.ClientTest.test_retries": TestStatus.FAILED,
        "net.tests.ClientTest.test_times_out": TestStatus.PASSED,
        "net.tests.ClientTest.test_closes": TestStatus.PASSED,
    }
    assert report.totals == {"total": 4, "failed": 1}


def test_ran_without_a_verdict_line_still_gives_the_count() -> None:
    text = "test_a (m.T) ... ok\ntest_b (m.T) ... ok\n\n" + "-" * 70 + "\nRan 2 tests in 0.002s\n"
    report = parse_observation(text, "python -m unittest -v m")
    assert report is not None and report.totals == {"total": 2} and not report.complete
