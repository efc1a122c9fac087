"""vitest: the failed-test list and the Test Files / Tests totals."""

from contextweaver.records import TestStatus, ValidationStatus
from contextweaver.validation import TestTracker, parse_observation

FAILED_RUN = """\

 RUN  v1.6.0 /app

 ✓ src/math.test.ts  (3 tests) 4ms
 ❯ src/cart.test.ts  (2 tests | 1 failed) 9ms
   × Cart > removes items

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  src/cart.test.ts > Cart > removes items
AssertionError: expected 1 to be 2 // Object.is equality

 Test Files  1 failed | 1 passed (2)
      Tests  1 failed | 4 passed | 1 todo (6)
   Start at  09:12:44
   Duration  610ms
"""


def test_failed_tests_and_totals() -> None:
    report = parse_observation(FAILED_RUN, "npx vitest run")
    assert report is not None and report.runner == "vitest"
    assert report.tests == {"src/cart.test.ts > Cart > removes items": TestStatus.FAILED}
    assert report.totals == {"total": 6, "failed": 1, "passed": 4, "skipped": 1}
    assert TestTracker().observe(1, "npx vitest run", FAILED_RUN).status is ValidationStatus.FAILED


def test_clean_run_passes_and_a_cut_run_is_unknown() -> None:
    clean = "\n RUN  v1.6.0 /app\n\n ✓ src/math.test.ts  (3 tests) 4ms\n\n Test Files  1 passed (1)\n      Tests  3 passed (3)\n"
    assert TestTracker().observe(1, "vitest run", clean).status is ValidationStatus.PASSED
    cut = clean.split("      Tests")[0]
    assert TestTracker().observe(1, "vitest run", cut).status is ValidationStatus.UNKNOWN
