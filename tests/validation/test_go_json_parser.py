"""go test -json: test2json events, tests cut by a package failure, build failures on plain lines."""

import json

from contextweaver.records import TestStatus
from contextweaver.validation import parse_observation


def event(action: str, package: str, test: str | None = None, output: str | None = None) -> str:
    data: dict[str, object] = {"Time": "2024-05-01T10:00:00Z", "Action": action, "Package": package}
    if test:
        data["Test"] = test
    if output:
        data["Output"] = output
    return json.dumps(data, separators=(",", ":"))


def test_events_give_statuses_and_running_tests_fail_with_their_package() -> None:
    lines = [
        event("run", "acme/store", "TestPut"),
        event("output", "acme/store", "TestPut", "=== RUN   TestPut\n"),
        event("pass", "acme/store", "TestPut"),
        event("run", "acme/store", "TestGet"),
        event("run", "acme/store", "TestGet/miss"),
        event("skip", "acme/store", "TestGet/miss"),
        event("output", "acme/store", None, "panic: boom\n"),
        event("fail", "acme/store"),
    ]
    report = parse_observation("\n".join(lines) + "\n", "go test -json ./...")
    assert report is not None and report.runner == "go"
    assert report.tests == {
        "acme/store.TestPut": TestStatus.PASSED,
        "acme/store.TestGet/miss": TestStatus.SKIPPED,
        "acme/store.TestGet": TestStatus.FAILED,
    }
    assert report.complete and report.failed_signal


def test_unfinished_package_is_incomplete_and_build_failures_are_errors() -> None:
    lines = [event("run", "acme/a", "TestX"), event("pass", "acme/a", "TestX")]
    text = "\n".join(lines) + "\n# acme/b\nb.go:3:1: syntax error\nFAIL\tacme/b [build failed]\n"
    report = parse_observation(text, "go test -json ./...")
    assert report is not None
    assert report.tests["acme/b.[build failed]"] is TestStatus.ERROR
    assert not report.complete


def test_benchmark_results_are_output_lines() -> None:
    lines = [
        '{"Time":"2024-05-01T10:00:00Z","Action":"start","Package":"example.com/codec"}',
        '{"Time":"2024-05-01T10:00:00Z","Action":"output","Package":"example.com/codec","Output":"goos: linux\\n"}',
        '{"Time":"2024-05-01T10:00:01Z","Action":"output","Package":"example.com/codec","Test":"BenchmarkEncode",'
        '"Output":"BenchmarkEncode-8   \\t  500000\\t      2310 ns/op\\n"}',
        '{"Time":"2024-05-01T10:00:02Z","Action":"output","Package":"example.com/codec","Test":"BenchmarkDecode",'
        '"Output":"--- FAIL: BenchmarkDecode\\n"}',
        '{"Time":"2024-05-01T10:00:02Z","Action":"output","Package":"example.com/codec","Output":"FAIL\\n"}',
        '{"Time":"2024-05-01T10:00:02Z","Action":"fail","Package":"example.com/codec","Elapsed":2.1}',
    ]
    report = parse_observation("\n".join(lines) + "\n", "go test -json -bench . ./...")
    assert report is not None
    assert report.tests == {
        "example.com/codec.BenchmarkEncode": TestStatus.PASSED,
        "example.com/codec.BenchmarkDecode": TestStatus.FAILED,
    }
