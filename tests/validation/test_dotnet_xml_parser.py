"""NUnit, TRX and xUnit.net reports: one element per test, each with its own outcome words."""

from contextweaver.types import TestStatus
from contextweaver.validation import parse_observation


def test_nunit3_error_label_and_suites_ignored() -> None:
    text = """<test-run result="Failed"><test-suite type="Assembly" result="Failed">
<test-case fullname="Calc.Tests.Adds" result="Passed"/>
<test-case fullname="Calc.Tests.Divides" result="Failed" label="Error"/>
<test-case fullname="Calc.Tests.Later" result="Skipped" label="Ignored"/>
</test-suite></test-run>"""
    report = parse_observation(text)
    assert report is not None and report.runner == "nunit-xml"
    assert report.tests == {
        "Calc.Tests.Adds": TestStatus.PASSED,
        "Calc.Tests.Divides": TestStatus.ERROR,
        "Calc.Tests.Later": TestStatus.SKIPPED,
    }


def test_trx_outcomes() -> None:
    text = """<TestRun><Results>
<UnitTestResult testName="Adds" outcome="Passed"/>
<UnitTestResult testName="Fails" outcome="Failed"/>
<UnitTestResult testName="Skips" outcome="NotExecuted"/>
</Results></TestRun>"""
    report = parse_observation(text, "cat results.trx")
    assert report is not None and report.runner == "trx"
    assert report.totals == {"passed": 1, "failed": 1, "error": 0, "skipped": 1}
    assert report.complete
