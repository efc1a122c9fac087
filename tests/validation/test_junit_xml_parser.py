"""JUnit XML printed by an action: statuses per testcase, surrounding text, cut-off reports."""

from contextweaver.types import TestStatus
from contextweaver.validation import parse_observation

REPORT = """\
$ cat build/test-results/TEST-report.xml
<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="shop.CartTest" tests="4" failures="1" errors="1" skipped="1">
    <testcase classname="shop.CartTest" name="adds" time="0.01"/>
    <testcase classname="shop.CartTest" name="removes &amp; refunds" time="0.02">
      <failure message="expected 2">trace</failure>
    </testcase>
    <testcase classname="shop.CartTest" name="totals"><error type="NullPointerException"/></testcase>
    <testcase name="slow"><skipped/></testcase>
  </testsuite>
</testsuites>
"""


def test_statuses_entities_and_suite_name_fallback() -> None:
    report = parse_observation(REPORT, "cat build/test-results/TEST-report.xml")
    assert report is not None and report.runner == "junit-xml"
    assert report.tests == {
        "shop.CartTest.adds": TestStatus.PASSED,
        "shop.CartTest.removes & refunds": TestStatus.FAILED,
        "shop.CartTest.totals": TestStatus.ERROR,
        "shop.CartTest.slow": TestStatus.SKIPPED,
    }
    assert report.totals == {"passed": 1, "failed": 1, "error": 1, "skipped": 1}
    assert report.complete


def test_cut_report_is_incomplete() -> None:
    report = parse_observation(REPORT[: REPORT.index("<testcase name=")])
    assert report is not None and not report.complete and report.failed_signal
