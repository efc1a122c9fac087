"""Maven Surefire console: failing tests in both naming styles, class lines, Results totals."""

from contextweaver.records import TestStatus, ValidationStatus
from contextweaver.validation import TestTracker, parse_observation

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


SUREFIRE_3 = """\
[INFO] Running com.shop.OrderTest
[ERROR] Tests run: 3, Failures: 1, Errors: 1, Skipped: 0, Time elapsed: 0.041 s <<< FAILURE! -- in com.shop.OrderTest
[ERROR] com.shop.OrderTest.rejectsEmpty -- Time elapsed: 0.006 s <<< FAILURE!
org.opentest4j.AssertionFailedError: expected: <true> but was: <false>
[ERROR] com.shop.OrderTest.loadsLines -- Time elapsed: 0 s <<< ERROR!
java.lang.NullPointerException
[INFO] Tests run: 2, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.01 s -- in com.shop.TaxTest
[INFO]
[INFO] Results:
[INFO]
[ERROR] Tests run: 5, Failures: 1, Errors: 1, Skipped: 0
[INFO] BUILD FAILURE
"""


def test_surefire_3_failure_lines() -> None:
    report = parse_observation(SUREFIRE_3, "mvn -q test")
    assert report is not None
    assert report.tests == {
        "com.shop.OrderTest.rejectsEmpty": TestStatus.FAILED,
        "com.shop.OrderTest.loadsLines": TestStatus.ERROR,
    }
    assert report.passed_scopes == frozenset({"com.shop.TaxTest"})


def test_a_build_that_ran_no_test_failed() -> None:
    tracker = TestTracker()
    compile_failure = (
        "[INFO] BUILD FAILURE\n[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:"
        "3.11.0:compile (default-compile) on project shop: Compilation failure\n"
        "[ERROR] /src/main/java/com/shop/Order.java:[12,9] cannot find symbol\n"
    )
    assert tracker.observe(1, "mvn test", compile_failure).status is ValidationStatus.FAILED
    no_tests = (
        "[INFO] BUILD FAILURE\n[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:"
        "3.2.5:test (default-test) on project shop: No tests were executed!  (Set -Dsurefire.failIfNoSpecified"
        "Tests=false to ignore this error.) -> [Help 1]\n"
    )
    verdict = tracker.observe(2, "mvn test -Dtest=Missing", no_tests)
    assert verdict.status is ValidationStatus.FAILED and "[no tests executed]" in verdict.results
