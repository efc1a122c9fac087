"""The Dart/Flutter JSON reporter: an event stream, one JSON object per line."""

import json

from contextweaver.records import TestStatus, ValidationStatus
from contextweaver.validation import TestTracker, parse_observation


def _events(*tests: tuple[str, str, bool], done: bool = True) -> str:
    lines = [{"protocolVersion": "0.1.1", "type": "start", "time": 0}]
    lines.append({"suite": {"id": 0, "platform": "vm", "path": "test/cart_test.dart"}, "type": "suite"})
    lines.append(
        {"test": {"id": 1, "name": "loading test/cart_test.dart", "suiteID": 0}, "type": "testStart"}
    )
    lines.append({"testID": 1, "result": "success", "skipped": False, "hidden": True, "type": "testDone"})
    for n, (name, result, skipped) in enumerate(tests, 2):
        lines.append({"test": {"id": n, "name": name, "suiteID": 0, "groupIDs": []}, "type": "testStart"})
        if result == "error":
            lines.append({"testID": n, "error": "Exception: boom", "isFailure": False, "type": "error"})
        lines.append({"testID": n, "result": result, "skipped": skipped, "hidden": False, "type": "testDone"})
    if done:
        success = all(result == "success" for _, result, _ in tests)
        lines.append({"success": success, "type": "done", "time": 9})
    return "\n".join(json.dumps(line, separators=(",", ":")) for line in lines) + "\n"


def test_results_skip_hidden_loading_entries() -> None:
    text = _events(
        ("Cart adds items", "success", False),
        ("Cart applies coupons", "failure", False),
        ("Cart ships", "success", True),
        ("Cart refunds", "error", False),
    )
    report = parse_observation(text, "flutter test --machine")
    assert report is not None and report.runner == "dart" and report.complete
    assert report.tests == {
        "test/cart_test.dart::Cart adds items": TestStatus.PASSED,
        "test/cart_test.dart::Cart applies coupons": TestStatus.FAILED,
        "test/cart_test.dart::Cart ships": TestStatus.SKIPPED,
        "test/cart_test.dart::Cart refunds": TestStatus.ERROR,
    }
    assert report.totals == {"passed": 1, "failed": 1, "error": 1, "skipped": 1}


def test_a_stream_without_its_done_event_never_passes() -> None:
    text = _events(("Cart adds items", "success", False), done=False)
    verdict = TestTracker().observe(1, "dart test --reporter json", text)
    assert verdict.report is not None and not verdict.report.complete
    assert verdict.status is ValidationStatus.UNKNOWN


def test_same_name_twice_counts_twice_in_the_totals() -> None:
    text = _events(("Cart adds items", "success", False), ("Cart adds items", "success", False))
    report = parse_observation(text, "dart test")
    assert report is not None and report.totals is not None and report.totals["passed"] == 2
    assert len(report.tests) == 1
