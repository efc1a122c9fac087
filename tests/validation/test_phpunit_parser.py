"""PHPUnit: failure and error sections, OK and FAILURES! totals, cut-off output."""

from contextweaver.records import TestStatus, ValidationStatus
from contextweaver.validation import TestTracker, parse_observation

FAILED_RUN = """\
PHPUnit 10.5.20 by Sebastian Bergmann and contributors.

Runtime:       PHP 8.3.6

..FE.S                                                              6 / 6 (100%)

Time: 00:00.031, Memory: 10.00 MB

There was 1 error:

1) App\\Tests\\CartTest::testTotals
TypeError: Argument #1 must be of type int

/app/tests/CartTest.php:31

--

There was 1 failure:

1) App\\Tests\\CartTest::testRemovesItem
Failed asserting that 1 matches expected 2.

/app/tests/CartTest.php:22

ERRORS!
Tests: 6, Assertions: 9, Errors: 1, Failures: 1, Skipped: 1.
"""


def test_sections_name_the_failing_tests() -> None:
    report = parse_observation(FAILED_RUN, "vendor/bin/phpunit")
    assert report is not None and report.runner == "phpunit"
    assert report.tests == {
        "App\\Tests\\CartTest::testTotals": TestStatus.ERROR,
        "App\\Tests\\CartTest::testRemovesItem": TestStatus.FAILED,
    }
    assert report.totals == {"total": 6, "error": 1, "failed": 1, "skipped": 1, "passed": 3}


def test_ok_line_passes_and_a_cut_run_is_unknown() -> None:
    clean = "PHPUnit 11.1.0 by Sebastian Bergmann and contributors.\n\n....   4 / 4 (100%)\n\nOK (4 tests, 8 assertions)\n"
    assert TestTracker().observe(1, "phpunit", clean).status is ValidationStatus.PASSED
    cut = clean.split("OK (")[0]
    assert TestTracker().observe(1, "phpunit", cut).status is ValidationStatus.UNKNOWN
