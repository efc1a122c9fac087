"""cargo test / libtest: pretty (`test x ... ok`), terse (dots + failures list), json events, build errors."""

from __future__ import annotations

import re

from contextweaver.records import TestStatus
from contextweaver.validation.parsers.base import RunnerParser, bounded_int, framed
from contextweaver.validation.report import TestReport, any_failure, record

_RESULT = re.compile(
    r"\ntest result: (ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored; (\d+) measured; (\d+) filtered out"
)
_TEST = re.compile(r"\ntest ([^\n]+) \.\.\. (ok|FAILED|ignored|bench:)")
"""Greedy (fast); a name holding ` ... ` is re-read with _TEST_FIRST, the first ` ... status` wins."""
_TEST_FIRST = re.compile(r"test (.+?) \.\.\. (ok|FAILED|ignored|bench:)")
_FAILURES = re.compile(r"\nfailures:\n((?: {4}\S[^\n]*\n)+)")
_STDOUT_HEADER = re.compile(r"\n---- (.+?) stdout ----(?=\n)")
_JSON_TEST = re.compile(
    r'\n\{\s*+"type":\s*+"test",\s*+(?:"event":\s*+"(ok|failed|ignored)",\s*+"name":\s*+"([^"]++)"'
    r'|"name":\s*+"([^"]++)",\s*+"event":\s*+"(ok|failed|ignored)")'
)
"""libtest writes a result's name before its event (`started` events have the event first)."""
_SHOULD_PANIC = " - should panic"
"""libtest's suffix on a #[should_panic] test's line; the failures list names the test without it."""
_JSON_SUITE = re.compile(
    r'\n\{\s*"type":\s*"suite",\s*"event":\s*"(ok|failed)",\s*"passed":\s*(\d+),\s*"failed":\s*(\d+),'
    r'\s*"ignored":\s*(\d+)'
)
_JSON_SUITE_STARTED = re.compile(r'"type":\s*"suite",\s*"event":\s*"started"')
_BUILD_FAILED = re.compile(r"\nerror: could not compile `([^`]+)`")
_RUNNING = re.compile(r"\nrunning \d+ tests?(?=\n)")
_STATUSES = {
    "ok": TestStatus.PASSED,
    "FAILED": TestStatus.FAILED,
    "failed": TestStatus.FAILED,
    "ignored": TestStatus.SKIPPED,
    "bench:": TestStatus.PASSED,
}


class CargoParser(RunnerParser):
    """Each test binary prints `running N tests` ... `test result:`; totals add up over binaries."""

    passing_rows = (r"test \S+ \.\.\. ok",)
    runner = "cargo"
    family = "cargo"
    command_pattern = re.compile(r"\bcargo\s+(?:\+\S+\s+)?(?:test|nextest)\b")
    failure_marker = re.compile(r"\ntest \S++ \.\.\. FAILED|\ntest result: FAILED\.")
    hints = ("running ", "test result: ", '"type"')
    marker_pattern = re.compile(
        r"\n(?:running \d+ tests?(?=\n)|test result: (?:ok|FAILED)\. |\{\s*\"type\":\s*\"(?:suite|test)\")"
    )

    def detect(self, text: str, command: str = "") -> bool:
        if super().detect(text, command):
            return True
        return self.command_matches(command) and bool(_BUILD_FAILED.search(framed(text)))

    def parse(self, text: str, command: str = "") -> TestReport | None:
        text = framed(text)
        tests: dict[str, TestStatus] = {}
        for name, status in _TEST.findall(text):
            if " ... " in name:
                first = _TEST_FIRST.match(f"test {name} ... {status}")
                if first:
                    name, status = first.groups()
            record(tests, name.removesuffix(_SHOULD_PANIC), _STATUSES[status])
        if '"type"' in text:
            for status, name, later_name, later_status in _JSON_TEST.findall(text):
                name, status = (name, status) if status else (later_name, later_status)
                record(tests, name.removesuffix(_SHOULD_PANIC), _STATUSES[status])
        for block in _FAILURES.findall(text):
            for name in block.split("\n"):
                if name.strip():
                    record(tests, name.strip(), TestStatus.FAILED)
        for name in _STDOUT_HEADER.findall(text):
            record(tests, name, TestStatus.FAILED)
        totals: dict[str, int] | None = None
        failed = False
        for result in _RESULT.finditer(text):
            passed, failures, ignored, measured, filtered = (bounded_int(g) for g in result.groups()[1:])
            run = {"passed": passed, "failed": failures, "skipped": ignored}
            run |= {"measured": measured, "filtered": filtered}
            totals = {key: (totals or {}).get(key, 0) + value for key, value in run.items()}
            failed |= result.group(1) == "FAILED"
        for suite in _JSON_SUITE.finditer(text):
            run = {
                "passed": bounded_int(suite.group(2)),
                "failed": bounded_int(suite.group(3)),
                "skipped": bounded_int(suite.group(4)),
            }
            totals = {key: (totals or {}).get(key, 0) + value for key, value in run.items()}
            failed |= suite.group(1) == "failed"
        for build in _BUILD_FAILED.finditer(text):
            record(tests, f"{build.group(1)}.[build failed]", TestStatus.ERROR)
            failed = True
        runs = len(_RUNNING.findall(text)) + len(_JSON_SUITE_STARTED.findall(text))
        closers = len(_RESULT.findall(text)) + len(_JSON_SUITE.findall(text))
        if not tests and totals is None and not runs:
            return None
        return TestReport(
            runner=self.runner,
            tests=tests,
            totals=totals,
            complete=closers >= runs and (closers > 0 or bool(_BUILD_FAILED.search(text))),
            failed_signal=failed or any_failure(tests.values()),
        )
