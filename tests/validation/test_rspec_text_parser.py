"""RSpec's text output: the examples summary and the rerun list of failed examples."""

from contextweaver.records import TestStatus, ValidationStatus
from contextweaver.validation import TestTracker, parse_observation

FAILED_RUN = """\
Randomized with seed 31337
..F*

Failures:

  1) Cart removes items
     Failure/Error: expect(cart.size).to eq(2)

       expected: 2
            got: 1
     # ./spec/cart_spec.rb:14:in `block (2 levels) in <top (required)>'

Finished in 0.01421 seconds (files took 0.11 seconds to load)
4 examples, 1 failure, 1 pending

Failed examples:

rspec ./spec/cart_spec.rb:12 # Cart removes items
"""


def test_failed_examples_and_summary() -> None:
    report = parse_observation(FAILED_RUN, "bundle exec rspec")
    assert report is not None and report.runner == "rspec"
    assert report.tests == {"./spec/cart_spec.rb::Cart removes items": TestStatus.FAILED}
    assert report.totals == {"total": 4, "failed": 1, "skipped": 1, "error": 0, "passed": 2}


def test_clean_run_passes_and_a_cut_run_is_unknown() -> None:
    clean = "....\n\nFinished in 0.002 seconds (files took 0.1 seconds to load)\n4 examples, 0 failures\n"
    assert TestTracker().observe(1, "rspec", clean).status is ValidationStatus.PASSED
    assert (
        TestTracker().observe(1, "rspec", "Randomized with seed 1\n....\n").status is ValidationStatus.UNKNOWN
    )
