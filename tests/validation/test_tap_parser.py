"""TAP (node --test's TAP reporter, prove) and node's spec reporter."""

from contextweaver.records import TestStatus, ValidationStatus
from contextweaver.validation import TestTracker, parse_observation

NODE_TAP = """\
TAP version 13
# Subtest: parses dates
ok 1 - parses dates
  ---
  duration_ms: 0.61
  ...
# Subtest: rejects empty input
not ok 2 - rejects empty input
  ---
  duration_ms: 1.2
  failureType: 'testCodeFailure'
  ...
ok 3 - talks to the network # SKIP offline
1..3
# tests 3
# suites 0
# pass 1
# fail 1
# cancelled 0
# skipped 1
# todo 0
# duration_ms 48.1
"""


def test_tap_lines_and_counts() -> None:
    report = parse_observation(NODE_TAP, "node --test --test-reporter=tap")
    assert report is not None and report.runner == "tap"
    assert report.tests == {
        "parses dates": TestStatus.PASSED,
        "rejects empty input": TestStatus.FAILED,
        "talks to the network": TestStatus.SKIPPED,
    }
    assert report.totals == {"total": 3, "passed": 1, "failed": 1, "cancelled": 0, "skipped": 1}


def test_node_spec_reporter() -> None:
    text = "✔ parses dates (0.6ms)\n✔ formats dates (0.2ms)\nℹ tests 2\nℹ suites 0\nℹ pass 2\nℹ fail 0\n"
    verdict = TestTracker().observe(1, "node --test", text)
    assert verdict.status is ValidationStatus.PASSED
    assert verdict.results == {"parses dates": TestStatus.PASSED, "formats dates": TestStatus.PASSED}


def test_cut_before_the_plan_is_unknown() -> None:
    cut = NODE_TAP.split("# Subtest: rejects")[0]
    assert TestTracker().observe(1, "node --test", cut).status is ValidationStatus.UNKNOWN
