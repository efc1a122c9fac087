"""go test (-v text): `--- PASS/FAIL/SKIP` lines with subtests, package `ok`/`FAIL` lines, panics, build failures."""

from __future__ import annotations

import re

from contextweaver.types import TestStatus
from contextweaver.validation.parsers.base import RunnerParser
from contextweaver.validation.report import TestReport, record

_EVENT = re.compile(
    r"--- (?P<result>PASS|FAIL|SKIP): (?P<name>\S+) \([\d.]+ ?(?:s|seconds)\)"
    r"|^=== RUN\s+(?P<run>\S+)"
    r"|^(?P<pkgstatus>ok|FAIL)\s+(?P<pkg>\S+)(?:\s+(?P<how>\[(?:build|setup) failed\]|\(cached\)|[\d.]+s|"
    r"\[no test files\])[^\n]*)?$"
    r"|^(?P<bare>PASS|FAIL)$"
    r"|^(?P<bench>Benchmark\S+?)(?:-\d+)?\s+\d+\s+[\d.]+ ns/op",
    re.M,
)
_STATUSES = {"PASS": TestStatus.PASSED, "FAIL": TestStatus.FAILED, "SKIP": TestStatus.SKIPPED}


def package_failure_id(package: str, how: str | None) -> str:
    """The id of a package-level failure: a build or setup failure, else a failure outside any test."""
    if how in ("[build failed]", "[setup failed]"):
        return f"{package}.{how}"
    return f"{package}.[package failed]"


class GoTestParser(RunnerParser):
    """Tests are held until their package line names the package; a FAIL package with no failing test
    fails the tests still running (panic, timeout) or records a package-level error."""

    runner = "go"
    family = "go"
    command_pattern = re.compile(r"\bgo\s+test\b|\bgotestsum\b")
    hints = ("=== RUN", "--- ", "ok  ", "FAIL", "ns/op")
    marker_pattern = re.compile(
        r"^=== RUN\s|^\s*--- (?:PASS|FAIL|SKIP): \S+ \(|"
        r"^(?:ok|FAIL)\s+\S+\s+(?:[\d.]+s|\(cached\)|\[build failed\]|\[setup failed\])|"
        r"^Benchmark\S+\s+\d+\s+[\d.]+ ns/op",
        re.M,
    )

    def parse(self, text: str, command: str = "") -> TestReport | None:
        tests: dict[str, TestStatus] = {}
        pending: dict[str, TestStatus] = {}
        running: list[str] = []
        closed = False
        failed = False
        for match in _EVENT.finditer(text):
            if match.group("result"):
                name = match.group("name")
                status = _STATUSES[match.group("result")]
                record(pending, name, status)
                if name in running:
                    running.remove(name)
                failed |= status is TestStatus.FAILED
                closed = False
            elif match.group("run"):
                running.append(match.group("run"))
                closed = False
            elif match.group("bench"):
                pending[match.group("bench")] = TestStatus.PASSED
                closed = False
            elif match.group("bare"):
                closed = True
                failed |= match.group("bare") == "FAIL"
            else:
                package = match.group("pkg")
                package_failed = match.group("pkgstatus") == "FAIL"
                failed |= package_failed
                if package_failed and not any(s is TestStatus.FAILED for s in pending.values()):
                    if running:
                        for name in running:
                            pending[name] = TestStatus.FAILED
                    else:
                        record(tests, package_failure_id(package, match.group("how")), TestStatus.ERROR)
                for name, status in pending.items():
                    record(tests, f"{package}.{name}", status)
                pending, running, closed = {}, [], True
        for name, status in pending.items():
            record(tests, name, status)
        if not tests and not closed and not failed:
            return None
        return TestReport(
            runner=self.runner,
            tests=tests,
            totals=None,
            complete=closed and not running,
            failed_signal=failed,
        )
