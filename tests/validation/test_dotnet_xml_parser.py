"""NUnit, TRX and xUnit.net reports: one element per test, each with its own outcome words."""

from contextweaver.records import TestStatus, ValidationStatus
from contextweaver.validation import TestTracker, parse_observation


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


def test_nunit2_success_attribute_without_result() -> None:
    text = """<test-results name="calc.tests.dll" total="3" failures="1" not-run="1">
<test-suite name="calc.tests.dll" executed="True" success="False"><results>
<test-case name="Calc.Tests.Adds" executed="True" success="True" time="0.002" asserts="1" />
<test-case name="Calc.Tests.Divides" executed="True" success="False" time="0.004" asserts="1">
<failure><message><![CDATA[Expected 2 but was 3]]></message></failure></test-case>
<test-case name="Calc.Tests.Later" executed="False"><reason><message>todo</message></reason></test-case>
</results></test-suite></test-results>"""
    report = parse_observation(text)
    assert report is not None and report.runner == "nunit-xml"
    assert report.tests == {
        "Calc.Tests.Adds": TestStatus.PASSED,
        "Calc.Tests.Divides": TestStatus.FAILED,
        "Calc.Tests.Later": TestStatus.SKIPPED,
    }


def test_trx_tests_of_one_name_in_two_classes_stay_apart() -> None:
    text = """<TestRun id="r1" xmlns="http://microsoft.com/schemas/VisualStudio/TeamTest/2010"><Results>
<UnitTestResult executionId="e1" testId="t1" testName="Parses" outcome="Passed" duration="00:00:00.01"/>
<UnitTestResult executionId="e2" testId="t2" testName="Parses" outcome="Failed" duration="00:00:00.02"/>
</Results><TestDefinitions>
<UnitTest name="Parses" storage="app.tests.dll" id="t1"><Execution id="e1"/>
<TestMethod codeBase="app.tests.dll" className="App.Tests.DateTests, App.Tests, Version=1.0.0.0" name="Parses"/>
</UnitTest>
<UnitTest name="Parses" storage="app.tests.dll" id="t2"><Execution id="e2"/>
<TestMethod codeBase="app.tests.dll" className="App.Tests.MoneyTests" name="Parses"/></UnitTest>
</TestDefinitions></TestRun>"""
    report = parse_observation(text)
    assert report is not None and report.runner == "trx"
    assert report.tests == {
        "App.Tests.DateTests.Parses": TestStatus.PASSED,
        "App.Tests.MoneyTests.Parses": TestStatus.FAILED,
    }
    assert report.totals == {"passed": 1, "failed": 1, "error": 0, "skipped": 0}


def test_trx_run_outcome_failed_fails_without_a_failing_result() -> None:
    text = """<TestRun><Results>
<UnitTestResult testName="Adds" outcome="Passed"/>
</Results><ResultSummary outcome="Failed"><Counters total="1" passed="1" failed="0"/>
<RunInfos><RunInfo outcome="Error"><Text>Test host process exited with error code 134</Text></RunInfo></RunInfos>
</ResultSummary></TestRun>"""
    verdict = TestTracker().observe(1, "cat run.trx", text)
    assert verdict.status is ValidationStatus.FAILED
    assert "exited with error code 134" in verdict.reason


def test_a_gt_sign_inside_a_quoted_parameter_keeps_the_test() -> None:
    text = """<test-run result="Failed"><test-suite type="Assembly">
<test-case name='Compares("a>b")' fullname='Calc.Compares("a>b")' result='Failed'/>
<test-case name="Adds" fullname="Calc.Adds" result="Passed"/>
</test-suite></test-run>"""
    report = parse_observation(text)
    assert report is not None
    assert report.tests == {'Calc.Compares("a>b")': TestStatus.FAILED, "Calc.Adds": TestStatus.PASSED}


def test_a_junit_failure_beside_a_passing_nunit_report_is_still_no_pass() -> None:
    nunit = '<test-run result="Passed"><test-case fullname="Calc.Adds" result="Passed"/></test-run>'
    quoted = nunit.replace("/>", '><output><![CDATA[<error code="0"/>]]></output></test-case>', 1)
    assert TestTracker().observe(1, "cat r.xml", quoted).status is ValidationStatus.PASSED
    outside = nunit + '\n<failure message="boom"/>'
    assert TestTracker().observe(2, "cat r.xml", outside).status is not ValidationStatus.PASSED
