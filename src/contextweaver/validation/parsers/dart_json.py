"""The Dart test runner's JSON reporter (`dart test --reporter json`, `flutter test --machine`)."""

from __future__ import annotations

import json
import re
from typing import Any

from contextweaver.records import TestStatus
from contextweaver.validation.parsers.base import RunnerParser, bounded_int, framed, json_string
from contextweaver.validation.report import STATUS_KEY, TestReport, any_failure, record

_EVENT = re.compile(
    r'\n(?:\{"test":\{"id":(\d+),"name":"((?:[^"\\\n]|\\.)*+)","suiteID":(\d+),[^\n]*"type":"testStart"'
    r'|\{"testID":(\d+),"result":"(\w+)","skipped":(true|false),"hidden":(true|false),"type":"testDone"'
    r'|(\{[^\n]*"type":"(?:suite|testStart|testDone|done)"[^\n]*))[^\n]*(?=\n)'
)
"""The four events the results need, one JSON object per line. testStart and testDone in the reporter's
own key order are read by this match (thousands per run); other lines are decoded with json."""
_RESULTS = {"success": TestStatus.PASSED, "failure": TestStatus.FAILED, "error": TestStatus.ERROR}


class DartJsonParser(RunnerParser):
    """Ids are `suite path::test name` (the name already holds its groups). Hidden tests (the runner's
    own "loading <file>" entries) are not tests; a test that started and never finished did not pass."""

    runner = "dart"
    family = "dart"
    command_pattern = re.compile(r"\b(?:dart|flutter)\s+test\b")
    failure_marker = re.compile(r'"result":"(?:failure|error)"')
    marker_pattern = re.compile(
        r'\n\{"(?:protocolVersion|suite|test|testID|group|count|success)":[^\n]*'
        r'"type":"(?:start|suite|testStart|testDone|allSuites|group|done)"'
    )

    def parse(self, text: str, command: str = "") -> TestReport | None:
        suites: dict[Any, str] = {}
        started: dict[Any, str] = {}
        tests: dict[str, TestStatus] = {}
        done: dict[str, Any] | None = None
        totals = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
        event: Any
        # A state machine over the events reads better than a table here: a testDone names only an id,
        # which means a test only through the testStart and suite events before it.
        for start_id, name, suite_id, done_id, result, skipped, hidden, line in _EVENT.findall(framed(text)):
            if start_id:
                path = suites.get(bounded_int(suite_id), "")
                name = json_string(name)
                started[bounded_int(start_id)] = f"{path}::{name}" if path else name
                continue
            if done_id:
                event = {"type": "testDone", "testID": bounded_int(done_id), "result": result}
                event |= {"skipped": skipped == "true", "hidden": hidden == "true"}
            else:
                try:
                    event = json.loads(line)
                except (ValueError, RecursionError):  # RecursionError: hostile nesting
                    continue
            if not isinstance(event, dict):
                continue
            kind = event.get("type")
            if kind == "suite" and isinstance(event.get("suite"), dict):
                suites[event["suite"].get("id")] = str(event["suite"].get("path") or "")
            elif kind == "testStart" and isinstance(event.get("test"), dict):
                test = event["test"]
                path = suites.get(test.get("suiteID"), "")
                name = str(test.get("name") or "")
                started[test.get("id")] = f"{path}::{name}" if path else name
            elif kind == "testDone":
                test_id = started.pop(event.get("testID"), None)
                if test_id is None or event.get("hidden"):
                    continue
                status = (
                    TestStatus.SKIPPED if event.get("skipped") else _RESULTS.get(str(event.get("result")))
                )
                status = status or TestStatus.ERROR
                record(tests, test_id, status)
                totals[STATUS_KEY[status]] += 1  # per run: two tests of one name both count
            elif kind == "done":
                done = event
        if not tests and not suites and done is None:
            return None
        return TestReport(
            runner=self.runner,
            tests=tests,
            totals=totals,
            complete=done is not None and not started,
            failed_signal=any_failure(tests.values()) or (done is not None and done.get("success") is False),
        )
