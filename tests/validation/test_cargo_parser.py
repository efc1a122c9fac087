"""cargo test / libtest: pretty and terse output, several binaries, json events, build errors."""

from contextweaver.records import TestStatus
from contextweaver.validation import TestTracker, parse_observation

PRETTY = """\
   Compiling ledger v0.3.0 (/repo)
     Running unittests src/lib.rs (target/debug/deps/ledger-1a2b)

running 3 tests
test account::tests::opens ... ok
test account::tests::overdraws ... FAILED
test account::tests::slow ... ignored, needs db

failures:

---- account::tests::overdraws stdout ----
thread 'account::tests::overdraws' panicked at src/account.rs:88:9:
assertion `left == right` failed

failures:
    account::tests::overdraws

test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s

error: test failed, to rerun pass `--lib`
"""


def test_pretty_output() -> None:
    report = parse_observation(PRETTY, "cargo test")
    assert report is not None and report.runner == "cargo"
    assert report.tests == {
        "account::tests::opens": TestStatus.PASSED,
        "account::tests::overdraws": TestStatus.FAILED,
        "account::tests::slow": TestStatus.SKIPPED,
    }
    assert report.totals == {"passed": 1, "failed": 1, "skipped": 1, "measured": 0, "filtered": 0}
    assert report.complete and report.failed_signal


def test_terse_output_names_failures_from_the_list() -> None:
    text = "running 4 tests\n..F.\nfailures:\n\nfailures:\n    parse::tests::rejects_empty\n\n"
    text += "test result: FAILED. 3 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n"
    report = parse_observation(text, "cargo test -q")
    assert report is not None
    assert report.tests == {"parse::tests::rejects_empty": TestStatus.FAILED}


def test_second_binary_without_result_is_incomplete() -> None:
    text = "running 1 test\ntest a ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n"
    text += "\nrunning 2 tests\ntest b ... ok\n"
    report = parse_observation(text, "cargo test")
    assert report is not None and not report.complete


def test_build_error_only_counts_for_cargo_commands() -> None:
    text = "error[E0425]: cannot find value `x`\nerror: could not compile `ledger` (lib test)\n"
    report = parse_observation(text, "cargo test")
    assert report is not None and report.tests == {"ledger.[build failed]": TestStatus.ERROR}
    assert parse_observation(text, "cat build.log") is None


LIBTEST_JSON = """\
{ "type": "suite", "event": "started", "test_count": 2 }
{ "type": "test", "event": "started", "name": "parse::reads_header" }
{ "type": "test", "event": "started", "name": "parse::rejects_empty" }
{ "type": "test", "name": "parse::reads_header", "event": "ok" }
{ "type": "test", "name": "parse::rejects_empty", "event": "failed", "stdout": "thread panicked\\n" }
{ "type": "suite", "event": "failed", "passed": 1, "failed": 1, "ignored": 0, "measured": 0, "filtered_out": 0, \
"exec_time": 0.002 }
"""


def test_libtest_json_results_name_the_test_before_the_event() -> None:
    report = parse_observation(LIBTEST_JSON, "cargo test -- -Z unstable-options --format json")
    assert report is not None
    assert report.tests == {
        "parse::reads_header": TestStatus.PASSED,
        "parse::rejects_empty": TestStatus.FAILED,
    }
    assert report.totals == {"passed": 1, "failed": 1, "skipped": 0}


def _should_panic_run(status: str, summary: str) -> str:
    failures = "\nfailures:\n    math::overflow_panics\n" if status == "FAILED" else ""
    return (
        "\nrunning 2 tests\ntest math::adds ... ok\n"
        f"test math::overflow_panics - should panic ... {status}\n{failures}\n"
        f"test result: {summary}. 1 passed; {int(status == 'FAILED')} failed; 0 ignored; 0 measured; 0 filtered out\n"
    )


def test_a_should_panic_test_is_one_test_that_can_be_fixed() -> None:
    tracker = TestTracker()
    first = tracker.observe(1, "cargo test", _should_panic_run("FAILED", "FAILED"))
    assert first.results == {"math::adds": TestStatus.PASSED, "math::overflow_panics": TestStatus.FAILED}
    second = tracker.observe(2, "cargo test", _should_panic_run("ok", "ok"))
    assert second.supersedes == (1,)
    assert {test: status for test, (status, _) in tracker.latest.items()}["math::overflow_panics"] is (
        TestStatus.PASSED
    )
