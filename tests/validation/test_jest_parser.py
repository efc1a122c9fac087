"""jest: verbose per-test marks under describe blocks, ● headers, suites that fail to run, totals."""

from contextweaver.records import TestStatus
from contextweaver.validation import parse_observation

VERBOSE = """\
PASS src/money.test.ts
  Money
    formats
      ✓ pads cents (3 ms)
      ○ skipped rounds half-even
    ✎ todo parses locales
FAIL src/cart.test.ts (1.2 s)
  Cart
    ✓ adds items
    ✕ applies coupons (12 ms)

  ● Cart › applies coupons

    expect(received).toBe(expected)

Test Suites: 1 failed, 1 passed, 2 total
Tests:       1 failed, 1 skipped, 1 todo, 2 passed, 5 total
Snapshots:   0 total
Time:        2.1 s
"""


def test_verbose_ids_follow_describe_blocks() -> None:
    report = parse_observation(VERBOSE, "npx jest --verbose")
    assert report is not None and report.runner == "jest"
    assert report.tests == {
        "src/money.test.ts › Money › formats › pads cents": TestStatus.PASSED,
        "src/money.test.ts › Money › formats › rounds half-even": TestStatus.SKIPPED,
        "src/money.test.ts › Money › parses locales": TestStatus.SKIPPED,
        "src/cart.test.ts › Cart › adds items": TestStatus.PASSED,
        "src/cart.test.ts › Cart › applies coupons": TestStatus.FAILED,
    }
    assert report.totals == {"failed": 1, "skipped": 1, "todo": 1, "passed": 2, "total": 5}


def test_suite_that_fails_to_run_is_an_error() -> None:
    text = "FAIL test/api.test.js\n  ● Test suite failed to run\n\n    Cannot find module './db'\n\n"
    text += "Test Suites: 1 failed, 1 total\nTests:       0 total\n"
    report = parse_observation(text, "npm test")
    assert report is not None
    assert report.tests == {"test/api.test.js": TestStatus.ERROR}
    assert report.failed_signal


def test_non_verbose_failures_come_from_headers() -> None:
    text = (
        "FAIL test/a.test.js\n  ● math › adds\n\n    expected 3\n\nTests:       1 failed, 4 passed, 5 total\n"
    )
    report = parse_observation(text, "jest")
    assert report is not None
    assert report.tests == {"test/a.test.js › math › adds": TestStatus.FAILED}
