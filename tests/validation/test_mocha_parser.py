"""mocha: spec reporter (nested describes, failing numbers, pending) and the json reporter."""

import json

from contextweaver.records import TestStatus
from contextweaver.validation import parse_observation

SPEC = """\

  Queue
    #push()
      ✔ stores the item
      1) rejects null
    #pop()
      - returns undefined when empty


  1 passing (8ms)
  1 pending
  1 failing

  1) Queue
       #push()
         rejects null:
     AssertionError: expected [Function] to throw
"""


def test_spec_reporter_full_titles() -> None:
    report = parse_observation(SPEC, "npx mocha")
    assert report is not None and report.runner == "mocha"
    assert report.tests == {
        "Queue #push() stores the item": TestStatus.PASSED,
        "Queue #push() rejects null": TestStatus.FAILED,
        "Queue #pop() returns undefined when empty": TestStatus.SKIPPED,
    }
    assert report.totals == {"passed": 1, "failed": 1, "skipped": 1}


def test_json_reporter() -> None:
    data = {
        "stats": {"suites": 1, "tests": 2, "passes": 1, "pending": 0, "failures": 1},
        "tests": [],
        "passes": [{"title": "a", "fullTitle": "Api a"}],
        "failures": [{"title": "b", "fullTitle": "Api b", "err": {"message": "boom"}}],
        "pending": [],
    }
    report = parse_observation(json.dumps(data, indent=2), "mocha --reporter json")
    assert report is not None
    assert report.tests == {"Api a": TestStatus.PASSED, "Api b": TestStatus.FAILED}
    assert report.totals == {"passed": 1, "failed": 1, "skipped": 0}
