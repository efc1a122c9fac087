"""Gradle's test task: failing-test lines, the completed count, BUILD lines, cut-off output."""

from contextweaver.records import TestStatus, ValidationStatus
from contextweaver.validation import TestTracker, parse_observation

FAILED_RUN = """\
> Task :compileJava UP-TO-DATE
> Task :compileTestJava
> Task :test

com.acme.cart.CartTest > addsItem() PASSED

com.acme.cart.CartTest > removesItem() FAILED
    org.opentest4j.AssertionFailedError at CartTest.java:27

com.acme.cart.CartTest > Coupons > appliesPercent() SKIPPED

3 tests completed, 1 failed, 1 skipped

> Task :test FAILED

FAILURE: Build failed with an exception.

BUILD FAILED in 4s
4 actionable tasks: 2 executed, 2 up-to-date
"""


def test_failed_run_lines_and_totals() -> None:
    report = parse_observation(FAILED_RUN, "./gradlew test")
    assert report is not None and report.runner == "gradle" and report.complete
    assert report.tests == {
        "com.acme.cart.CartTest.addsItem": TestStatus.PASSED,
        "com.acme.cart.CartTest.removesItem": TestStatus.FAILED,
        "com.acme.cart.CartTest.Coupons.appliesPercent": TestStatus.SKIPPED,
    }
    assert report.totals == {"total": 3, "failed": 1, "skipped": 1}


def test_clean_run_passes_and_a_cut_run_is_unknown() -> None:
    clean = "> Task :test\n\ncom.acme.cart.CartTest > addsItem() PASSED\n\nBUILD SUCCESSFUL in 3s\n"
    assert TestTracker().observe(1, "gradle test", clean).status is ValidationStatus.PASSED
    cut = clean.split("BUILD")[0]
    assert TestTracker().observe(1, "gradle test", cut).status is ValidationStatus.UNKNOWN


def test_a_compile_failure_fails_the_run() -> None:
    text = "> Task :compileJava FAILED\n> Task :test SKIPPED\n\nFAILURE: Build failed with an exception.\n\nBUILD FAILED in 1s\n"
    verdict = TestTracker().observe(1, "./gradlew test", text)
    assert verdict.status is ValidationStatus.FAILED and ":compileJava [build failed]" in verdict.results
