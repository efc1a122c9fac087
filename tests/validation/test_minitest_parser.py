"""Minitest: failure, error and skip blocks, -v lines, the runs summary."""

from contextweaver.records import TestStatus, ValidationStatus
from contextweaver.validation import TestTracker, parse_observation

FAILED_RUN = """\
Run options: --seed 4242

# Running:

CartTest#test_adds = 0.00 s = .
CartTest#test_removes = 0.00 s = F
CartTest#test_totals = 0.00 s = E

Finished in 0.002114s, 1419.1 runs/s, 1419.1 assertions/s.

  1) Failure:
CartTest#test_removes [test/cart_test.rb:12]:
Expected: 2
  Actual: 1

  2) Error:
CartTest#test_totals:
NoMethodError: undefined method `sum' for nil

3 runs, 3 assertions, 1 failures, 1 errors, 0 skips
"""


def test_blocks_verbose_lines_and_summary() -> None:
    report = parse_observation(FAILED_RUN, "ruby -Itest test/cart_test.rb -v")
    assert report is not None and report.runner == "minitest"
    assert report.tests == {
        "CartTest#test_adds": TestStatus.PASSED,
        "CartTest#test_removes": TestStatus.FAILED,
        "CartTest#test_totals": TestStatus.ERROR,
    }
    assert report.totals == {"total": 3, "failed": 1, "error": 1, "skipped": 0, "passed": 1}


def test_clean_run_passes_and_a_cut_run_is_unknown() -> None:
    clean = "# Running:\n\n..\n\nFinished in 0.001s\n\n2 runs, 2 assertions, 0 failures, 0 errors, 0 skips\n"
    assert TestTracker().observe(1, "rake test", clean).status is ValidationStatus.PASSED
    cut = FAILED_RUN.split("3 runs")[0]
    assert TestTracker().observe(1, "rake test", cut).status is not ValidationStatus.PASSED
