"""Maven Surefire console: failing tests in both naming styles, class lines, Results totals."""

from contextweaver.types import TestStatus
from contextweaver.validation import parse_observation

RUN = """\
[INFO] -------------------------------------------------------
[INFO]  T E S T S
[INFO] -------------------------------------------------------
[INFO] Running org.acme.CartTest
[ERROR] Tests run: 3, Failures: 1, Errors: 1, Skipped: 0, Time elapsed: 0.05 s <<< FAILURE! - in org.acme.CartTest
[ERROR] totalIsSum(org.acme.CartTest)  Time elapsed: 0.01 s  <<< FAILURE!
[ERROR] org.acme.CartTest.emptyCart  Time elapsed: 0.002 s  <<< ERROR!
[INFO] Running org.acme.PriceTest
[INFO] Tests run: 4, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.02 s - in org.acme.PriceTest
[INFO]
[INFO] Results:
[INFO]
[ERROR] Tests run: 7, Failures: 1, Errors: 1, Skipped: 0
[INFO]
[INFO] BUILD FAILURE
"""


def test_failures_errors_totals_and_clean_classes() -> None:
    report = parse_observation(RUN, "mvn test")
    assert report is not None and report.runner == "maven"
    assert report.tests == {
        "org.acme.CartTest.totalIsSum": TestStatus.FAILED,
        "org.acme.CartTest.emptyCart": TestStatus.ERROR,
    }
    assert report.totals == {"total": 7, "failed": 1, "error": 1, "skipped": 0}
    assert report.passed_scopes == frozenset({"org.acme.PriceTest"})


def test_cut_before_results_is_incomplete() -> None:
    report = parse_observation(RUN.split("[INFO] Results:")[0], "mvn test")
    assert report is not None and not report.complete and report.failed_signal


def test_a_lone_failing_test_line_is_detected_and_fails() -> None:
    from contextweaver.validation import TestTracker

    text = "[ERROR] testTotal(com.acme.InvoiceTest)  Time elapsed: 0.01 s  <<< FAILURE!\n  1 passing (0m)\n"
    verdict = TestTracker().observe(1, "", text)
    assert verdict.status == "failed"
