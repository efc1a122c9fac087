"""RSpec's JSON formatter: examples by file and full description, totals from the summary."""

import json

from contextweaver.records import TestStatus, ValidationStatus
from contextweaver.validation import TestTracker, parse_observation


def _run(statuses: dict[str, str]) -> str:
    examples = [
        {
            "id": f"./spec/cart_spec.rb[1:{n}]",
            "description": title.split(" ", 1)[1],
            "full_description": title,
            "status": status,
            "file_path": "./spec/cart_spec.rb",
            "line_number": 10 + n,
        }
        for n, (title, status) in enumerate(statuses.items(), 1)
    ]
    failures = sum(s == "failed" for s in statuses.values())
    pending = sum(s == "pending" for s in statuses.values())
    document = {
        "version": "3.13.0",
        "examples": examples,
        "summary": {
            "example_count": len(examples),
            "failure_count": failures,
            "pending_count": pending,
            "errors_outside_of_examples_count": 0,
        },
        "summary_line": f"{len(examples)} examples, {failures} failures, {pending} pending",
    }
    return "Run options: exclude {:slow=>true}\n" + json.dumps(document) + "\n"


def test_statuses_ids_and_totals() -> None:
    text = _run({"Cart adds items": "passed", "Cart applies coupons": "failed", "Cart ships": "pending"})
    report = parse_observation(text, "bundle exec rspec --format json")
    assert report is not None and report.runner == "rspec" and report.complete
    assert report.tests == {
        "./spec/cart_spec.rb::Cart adds items": TestStatus.PASSED,
        "./spec/cart_spec.rb::Cart applies coupons": TestStatus.FAILED,
        "./spec/cart_spec.rb::Cart ships": TestStatus.SKIPPED,
    }
    assert report.totals == {"total": 3, "failed": 1, "skipped": 1, "error": 0, "passed": 1}


def test_a_fixed_example_supersedes_its_failing_run() -> None:
    tracker = TestTracker()
    failing = tracker.observe(3, "rspec --format json", _run({"Cart adds items": "failed"}))
    fixed = tracker.observe(5, "rspec --format json", _run({"Cart adds items": "passed"}))
    assert failing.status is ValidationStatus.FAILED
    assert fixed.status is ValidationStatus.PASSED and fixed.supersedes == (3,)


def test_prose_mentioning_examples_is_not_a_run() -> None:
    assert parse_observation('config: {"examples": [1, 2]} and more', "cat config.json") is None


def test_two_runs_in_one_output_are_both_read() -> None:
    text = _run({"Cart adds items": "passed"}) + "$ rspec again\n" + _run({"Cart ships": "failed"})
    report = parse_observation(text, "rspec --format json; rspec --format json")
    assert report is not None and report.runs == 2
    assert report.tests["./spec/cart_spec.rb::Cart ships"] is TestStatus.FAILED
    assert report.totals is not None and report.totals["total"] == 2
