"""Observations as agents see them: envelopes, head/tail truncation, ANSI colours, carriage returns."""

from contextweaver.records import TestStatus
from contextweaver.validation import parse_observation
from contextweaver.validation.text import clean_observation

HEAD = "============================= test session starts ==============================\n"
HEAD += "tests/test_a.py::test_one PASSED\ntests/test_a.py::test_two FAILED\n"


def test_envelope_and_returncode_are_read() -> None:
    clean = clean_observation("<returncode>2</returncode>\n<output>\nhello\n</output>")
    assert clean.returncode == 2 and "hello" in clean.text and "<output>" not in clean.text
    assert not clean.truncated


def test_truncated_run_without_totals_never_passes() -> None:
    observation = (
        "<returncode>1</returncode>\n<output_head>\n" + HEAD.replace("FAILED", "PASSED") + "</output_head>\n"
        "<elided_chars>\n5000 characters elided\n</elided_chars>\n<output_tail>\nsome trace\n</output_tail>"
    )
    report = parse_observation(observation, "pytest -v")
    assert report is not None and not report.complete
    assert clean_observation(observation).truncated


def test_totals_in_the_tail_complete_a_truncated_run() -> None:
    observation = (
        "<output_head>\n" + HEAD + "</output_head>\n<elided_chars>\n90 characters elided\n</elided_chars>\n"
        "<output_tail>\n==== 1 failed, 1 passed in 0.3s ====\n</output_tail>"
    )
    report = parse_observation(observation, "pytest -v")
    assert report is not None and report.complete
    assert report.tests["tests/test_a.py::test_two"] is TestStatus.FAILED


def test_ansi_colours_and_carriage_returns() -> None:
    text = "\x1b[1m===== test session starts =====\x1b[0m\nrunning...\rtests/t.py::test_x \x1b[32mPASSED\x1b[0m\n"
    text += "\x1b[32m==== \x1b[32m\x1b[1m1 passed\x1b[0m\x1b[32m in 0.01s\x1b[0m\x1b[32m ====\x1b[0m\n"
    report = parse_observation(text, "pytest -v")
    assert report is not None
    assert report.tests == {"tests/t.py::test_x": TestStatus.PASSED}
    assert report.totals == {"passed": 1}


def test_two_runners_in_one_output_merge() -> None:
    text = "Ran 1 test in 0.01s\n\nOK\n" + "=== RUN   TestA\n--- FAIL: TestA (0.00s)\nFAIL\tacme/a\t0.01s\n"
    report = parse_observation(text, "python -m unittest && go test ./...")
    assert report is not None and report.runner == "unittest+go"
    assert report.tests == {"acme/a.TestA": TestStatus.FAILED}


def test_plain_output_is_not_a_test_run() -> None:
    assert parse_observation("error: file not found\nFAILED to open config\n", "cat x") is None
