"""go test (-v text): `--- PASS/FAIL/SKIP` lines with subtests, package `ok`/`FAIL` lines, panics, build failures."""

from __future__ import annotations

import re

from contextweaver.records import TestStatus
from contextweaver.validation.parsers.base import RunnerParser, framed
from contextweaver.validation.report import TestReport, record

_EVENT = re.compile(
    r"--- (PASS|FAIL|SKIP): (\S++)(?: \([\d.]+ ?(?:s|seconds)\)|(?=\n))"
    r"|\n(?:=== RUN[ \t]++(\S+)"
    r"|(ok|FAIL)[ \t]++(\S++)(?:[ \t]++(\[(?:build|setup) failed\]|\(cached\)|[\d.]+s|"
    r"\[no test files\])[^\n]*)?(?=\n)"
    r"|(PASS|FAIL)(?=\n)"
    r"|(Benchmark\S+?)(?:-\d+)?[ \t]++\d++[ \t]++[\d.]++ ns/op)"
)
"""One pass (a benchmark's `--- FAIL`/`--- SKIP` has no duration); every alternative starts with a literal ("--- " anywhere, the others at a line start),
which lets the regex engine skip ahead. Groups: result, name, run, pkgstatus, pkg, how, bare, bench."""
_STATUSES = {"PASS": TestStatus.PASSED, "FAIL": TestStatus.FAILED, "SKIP": TestStatus.SKIPPED}


def package_failure_id(package: str, how: str | None) -> str:
    """The id of a package-level failure: a build or setup failure, else a failure outside any test."""
    if how in ("[build failed]", "[setup failed]"):
        return f"{package}.{how}"
    return f"{package}.[package failed]"


class GoTestParser(RunnerParser):
    """Tests are held until their package line names the package; a FAIL package with no failing test
    fails the tests still running (panic, timeout) or records a package-level error."""

    passing_rows = (
        r"=== (?:RUN|PAUSE|CONT|NAME) +\S+",
        r"--- PASS: \S+ \([\d.]+ ?s\)",
    )
    runner = "go"
    family = "go"
    command_pattern = re.compile(r"\bgo\s+test\b|\bgotestsum\b")
    failure_marker = re.compile(r"--- FAIL: |\nFAIL(?:\t|(?=\n))")
    hints = ("=== RUN", "--- ", "ok ", "ok\t", "FAIL", "Benchmark")
    marker_pattern = re.compile(
        r"\n(?:=== RUN\s|[^\S\n]*+--- (?:PASS|FAIL|SKIP): \S+ \(|"
        r"(?:ok|FAIL)[ \t]++\S++[ \t]++(?:[\d.]+s|\(cached\)|\[build failed\]|\[setup failed\])|"
        r"Benchmark\S++[ \t]++\d++[ \t]++[\d.]++ ns/op)"
    )

    def parse(self, text: str, command: str = "") -> TestReport | None:
        tests: dict[str, TestStatus] = {}
        pending: dict[str, TestStatus] = {}
        running: dict[str, int] = {}
        """Tests started and not yet ended, with how many times (a name can run twice)."""
        closed = False
        failed = False
        # A state machine over the events reads better than a table here: what a package line means
        # depends on the tests still pending and running before it, which a table would have to pass around.
        for result, name, run, pkgstatus, package, how, bare, bench in _EVENT.findall(framed(text)):
            if result:
                status = _STATUSES[result]
                record(pending, name, status)
                if name in running:
                    running[name] -= 1
                    if not running[name]:
                        del running[name]
                failed |= status is TestStatus.FAILED
                closed = False
            elif run:
                running[run] = running.get(run, 0) + 1
                closed = False
            elif bench:
                pending[bench] = TestStatus.PASSED
                closed = False
            elif bare:
                closed = True
                failed |= bare == "FAIL"
            else:
                package_failed = pkgstatus == "FAIL"
                failed |= package_failed
                if package_failed and not any(s is TestStatus.FAILED for s in pending.values()):
                    if running:
                        for name in running:
                            pending[name] = TestStatus.FAILED
                    else:
                        record(tests, package_failure_id(package, how or None), TestStatus.ERROR)
                for name, status in pending.items():
                    record(tests, f"{package}.{name}", status)
                pending, running, closed = {}, {}, True
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
