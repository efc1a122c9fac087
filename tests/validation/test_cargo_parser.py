"""cargo test / libtest: pretty and terse output, several binaries, json events, build errors."""

from contextweaver.types import TestStatus
from contextweaver.validation import parse_observation

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
