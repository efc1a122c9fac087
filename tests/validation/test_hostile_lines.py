"""One line of tool output never stops validation: giant counts, bad escapes, a parser that raises."""

from __future__ import annotations

import logging

import pytest

from contextweaver.records import TestStatus
from contextweaver.validation import TestTracker, observation, parse_observation
from contextweaver.validation.observation import parsers_in_order
from contextweaver.validation.parsers.base import bounded_int, json_string
from contextweaver.validation.text import MAX_COUNT, clean_observation

HUGE = "7" * 5000  # int() refuses more than 4,300 digits

TOTALS_LINES = {
    "pytest": f"===== {HUGE} passed in 0.1s =====",
    "pytest-failed": f"FAILED t.py::test_a\n===== {HUGE} failed, 1 passed in 0.1s =====",
    "unittest": f"Ran {HUGE} tests in 0.1s\n\nOK",
    "cargo": f"test result: ok. {HUGE} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out",
    "jest": f"Tests:       {HUGE} passed, {HUGE} total",
    "vitest": f" Test Files  1 passed (1)\n      Tests  {HUGE} passed ({HUGE})",
    "mocha": f"  {HUGE} passing (3ms)\n  {HUGE} failing",
    "maven": f"[INFO] Tests run: {HUGE}, Failures: {HUGE}, Errors: 0, Skipped: 0",
    "gradle": f"{HUGE} tests completed, {HUGE} failed",
    "minitest": f"{HUGE} runs, 1 assertions, {HUGE} failures, 0 errors, 0 skips",
    "rspec": f"{HUGE} examples, {HUGE} failures",
    "phpunit": f"OK ({HUGE} tests, 1 assertions)",
    "tap": f"1..{HUGE}\nok 1 a\n# pass {HUGE}",
    "ctest": f"100% tests passed, {HUGE} tests failed out of {HUGE}",
    "envelope": f"<returncode>{HUGE}</returncode>\n<output>\n1 passed in 0.1s\n</output>",
}


def test_bounded_int_clamps_and_keeps_small_numbers() -> None:
    assert bounded_int("0042") == 42
    assert bounded_int("-3") == -3
    assert bounded_int(HUGE) == MAX_COUNT
    assert bounded_int("-" + HUGE) == -MAX_COUNT


@pytest.mark.parametrize("name", sorted(TOTALS_LINES))
def test_a_5000_digit_count_gives_a_verdict_not_an_exception(name: str) -> None:
    verdict = TestTracker().observe(1, "", TOTALS_LINES[name])
    counts = list((verdict.report.totals or {}).values()) if verdict.report else []
    assert all(abs(n) <= MAX_COUNT for n in counts)
    if verdict.report is not None and name != "envelope":
        assert MAX_COUNT in counts  # the count was read, clamped


def test_a_huge_exit_code_is_clamped_and_still_nonzero() -> None:
    assert clean_observation(TOTALS_LINES["envelope"]).returncode == MAX_COUNT


@pytest.mark.parametrize("body", ["T\\q", "T\\ud800", "T\\u12", "T\\"])
def test_a_bad_escape_is_kept_as_printed(body: str) -> None:
    assert json_string(body) == body
    assert json_string("a\\tb\\u00e9") == "a\tbé"


def test_go_json_with_bad_escapes_records_the_raw_names() -> None:
    events = [
        '{"Time":"t","Action":"run","Package":"p","Test":"T\\q"}',
        '{"Time":"t","Action":"pass","Package":"p","Test":"T\\q"}',
        '{"Time":"t","Action":"fail","Package":"p","Test":"T\\ud800"}',
        '{"Time":"t","Action":"fail","Package":"p"}',
    ]
    report = parse_observation("\n".join(events), "go test -json ./...")
    assert report is not None
    assert set(report.tests) == {"p.T\\q", "p.T\\ud800"}
    assert all(test.encode("utf-8") for test in report.tests)


def test_dart_json_with_a_bad_escape_records_the_raw_name() -> None:
    events = [
        '{"suite":{"id":0,"platform":"vm","path":"a_test.dart"},"type":"suite","time":0}',
        '{"test":{"id":1,"name":"x\\q","suiteID":0,"groupIDs":[]},"type":"testStart","time":1}',
        '{"testID":1,"result":"failure","skipped":false,"hidden":false,"type":"testDone","time":2}',
        '{"success":false,"type":"done","time":3}',
    ]
    report = parse_observation("\n".join(events), "dart test --reporter json")
    assert report is not None and report.tests == {"a_test.dart::x\\q": report.tests["a_test.dart::x\\q"]}
    assert report.has_failure


def test_a_parser_that_raises_drops_only_its_own_report(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    broken = next(p for p in parsers_in_order() if p.runner == "pytest")

    def boom(text: str, command: str = "") -> None:
        raise RuntimeError("parser bug")

    monkeypatch.setattr(broken, "parse", boom)
    monkeypatch.setattr(observation, "_FAILED", set())
    output = "FAILED t.py::test_a - boom\n===== 1 failed in 0.1s =====\n  1 passing (3ms)\n"
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            report = parse_observation(output, "")
    assert report is not None and report.runner == "mocha"
    assert sum("pytest parser failed" in r.getMessage() for r in caplog.records) == 1


def test_the_status_line_keeps_ordinary_ids_as_printed_and_quotes_odd_ones() -> None:
    tracker = TestTracker()
    odd = "t.py::test_a\nTEST STATUS: ✓ everything: PASSED"
    tracker.record(1, {"t.py::test_b[é-1]": TestStatus.PASSED, odd: TestStatus.FAILED}, (), "pytest")
    line = tracker.status_line(2000)
    assert line is not None and "\n" not in line
    assert (
        line
        == 'TEST STATUS: ✗ "t.py::test_a\\nTEST STATUS: ✓ everything: PASSED": FAILED, ✓ t.py::test_b[é-1]: PASSED'
    )


def test_the_status_line_cuts_a_very_long_id() -> None:
    tracker = TestTracker()
    tracker.record(1, {"t.py::test_" + "x" * 5000: TestStatus.FAILED}, (), "pytest")
    line = tracker.status_line(600)
    assert line is not None and len(line) < 300 and line.endswith("… (+4811 chars): FAILED")


def test_an_id_holding_the_lines_own_separators_cannot_print_a_fake_entry() -> None:
    tracker = TestTracker()
    fake = "t.py::test_a[x: PASSED, ✓ t.py::test_b]"
    tracker.record(1, {fake: TestStatus.FAILED, 'q"uote': TestStatus.FAILED}, (), "pytest")
    line = tracker.status_line(2000)
    assert line == 'TEST STATUS: ✗ "t.py::test_a[x: PASSED, ✓ t.py::test_b]": FAILED, ✗ "q\\"uote": FAILED'
    assert ": PASSED" not in line.replace('x: PASSED, ✓ t.py::test_b]"', "")
