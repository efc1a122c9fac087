"""go test -json (test2json events, as gotestsum reads them), with the non-JSON build-failure lines."""

from __future__ import annotations

import re

from contextweaver.records import TestStatus
from contextweaver.validation.parsers.base import RunnerParser, framed, json_string
from contextweaver.validation.parsers.go_test import package_failure_id
from contextweaver.validation.report import TestReport, any_failure, record

_STRING = r'((?:[^"\\\n]|\\.)*+)"'
_EVENT = re.compile(
    r'\n(?:\{"Time":"[^"\n]*","Action":"([\w-]+)","Package":"'
    + _STRING
    + r'(?:(,"Test":")'
    + _STRING
    + r")?[,}]"
    r'[^\n]*|(\{[^\n]*?"Action":\s*"([\w-]+)"[^\n]*))(?=\n)'
)
"""An event per line. test2json writes Time, Action, Package, Test in that order: those lines yield their
fields from this one match (groups: action, package, test key, test); any other line (groups: line,
action) has its fields searched for."""
_PACKAGE = re.compile(r'"(?:Package|ImportPath)":\s*"(?P<pkg>[^"\\]*(?:\\.[^"\\]*)*)"')
_TEST = re.compile(r'"Test":\s*"(?P<test>[^"\\]*(?:\\.[^"\\]*)*)"')
_PLAIN_FAIL = re.compile(r"\nFAIL\s+(\S+)\s+(\[(?:build|setup) failed\])")
_BENCH_OUTPUT = re.compile(
    r'\n\{[^\n]*?"Package":"([^"\n]*+)"[^\n]*?"Output":"(?:--- (FAIL|SKIP): (Benchmark[^\s"\\]++)'
    r'|(Benchmark[^\s"\\]+?)(?:-\d+)?(?:\\t| )+\d+(?:\\t| )+[\d.]+ ns/op)'
)
"""Benchmarks get no events of their own: their result is an output line (a result line, or `--- FAIL`)."""
_STATUSES = {"pass": TestStatus.PASSED, "fail": TestStatus.FAILED, "skip": TestStatus.SKIPPED}


def _benchmarks(text: str, tests: dict[str, TestStatus]) -> set[str]:
    """Record the benchmarks' results; returns the packages where one failed."""
    failed = set()
    for package, how, failed_bench, passed_bench in _BENCH_OUTPUT.findall(text):
        status = TestStatus.PASSED if not how else TestStatus.FAILED if how == "FAIL" else TestStatus.SKIPPED
        record(tests, f"{package}.{failed_bench or passed_bench}", status)
        if how == "FAIL":
            failed.add(package)
    return failed


class GoJsonParser(RunnerParser):
    """Reads only the fields it needs with anchored regexes (fast on megabytes of events)."""

    runner = "go"
    family = "go"
    command_pattern = re.compile(r"\bgo\s+test\b[^\n|]*\s-json\b")
    failure_marker = re.compile(r'"Action":\s*"fail"')
    marker_pattern = re.compile(r'\n\{"Time":"[^"]*","Action":"(?:run|pass|fail|skip|output|start)"')

    def parse(self, text: str, command: str = "") -> TestReport | None:
        tests: dict[str, TestStatus] = {}
        running: dict[str, set[str]] = {}
        failing: dict[str, bool] = {}
        finished: set[str] = set()
        seen: list[str] = []
        text = framed(text)
        bench_failed = _benchmarks(text, tests) if "Benchmark" in text else set()
        # A state machine over the events reads better than a table here: a package's closing action means
        # something only against the tests of that package still running, kept per package as they stream.
        for fast_action, raw_package, test_key, raw_test, line, action in _EVENT.findall(text):
            if fast_action:
                action, package = fast_action, json_string(raw_package)
                name = json_string(raw_test) if test_key else None
            else:
                package_match = _PACKAGE.search(line)
                package = json_string(package_match.group("pkg")) if package_match else ""
                test_match = _TEST.search(line)
                name = json_string(test_match.group("test")) if test_match else None
            if package not in failing:
                failing[package] = False
                seen.append(package)
            if name is not None:
                if action == "run":
                    running.setdefault(package, set()).add(name)
                elif action in _STATUSES:
                    running.get(package, set()).discard(name)
                    record(tests, f"{package}.{name}", _STATUSES[action])
                    failing[package] |= action == "fail"
            elif action == "build-fail":
                record(tests, f"{package}.[build failed]", TestStatus.ERROR)
                finished.add(package)
            elif action in ("pass", "fail", "skip"):
                finished.add(package)
                if action == "fail" and not failing[package] and package not in bench_failed:
                    still_running = sorted(running.get(package, ()))
                    for name in still_running:
                        record(tests, f"{package}.{name}", TestStatus.FAILED)
                    if not still_running:
                        record(tests, package_failure_id(package, None), TestStatus.ERROR)
                    failing[package] = True
        for plain in _PLAIN_FAIL.finditer(text):
            record(tests, package_failure_id(plain.group(1), plain.group(2)), TestStatus.ERROR)
            finished.add(plain.group(1))
        if not seen and not tests:
            return None
        return TestReport(
            runner=self.runner,
            tests=tests,
            totals=None,
            complete=all(package in finished for package in seen),
            failed_signal=any_failure(tests.values()),
        )
