"""JUnit XML printed by an action: statuses per testcase, surrounding text, cut-off reports."""

from contextweaver.records import TestStatus
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


def test_commented_out_and_cdata_elements_are_not_tests() -> None:
    text = """<testsuites>
  <!-- <testsuite> a suite; <testcase> one test per case -->
  <testsuite name="s">
    <!--
    <testsuite name="s.inner"><testcase classname="s.inner" name="gone"/></testsuite>
    -->
    <testcase classname="s" name="kept"><system-out><![CDATA[<testcase name="quoted"/>]]></system-out></testcase>
  </testsuite>
</testsuites>
"""
    report = parse_observation(text, "cat report.xml")
    assert report is not None and report.complete
    assert report.tests == {"s.kept": TestStatus.PASSED}
    assert report.totals == {"passed": 1, "failed": 0, "error": 0, "skipped": 0}


def test_the_most_severe_child_decides_and_disabled_is_not_a_pass() -> None:
    text = """<testsuite name="calc" tests="3">
  <testcase classname="calc.Ops" name="divides"><skipped message="flaky"/><failure message="1 != 2"/></testcase>
  <testcase classname="calc.Ops" name="rounds"><system-out>ok</system-out><skipped/><error type="E"/></testcase>
  <testcase classname="calc.Ops" name="later" status="disabled" time="0"/>
</testsuite>"""
    report = parse_observation(text, "cat report.xml")
    assert report is not None
    assert report.tests == {
        "calc.Ops.divides": TestStatus.FAILED,
        "calc.Ops.rounds": TestStatus.ERROR,
        "calc.Ops.later": TestStatus.SKIPPED,
    }
