"""cargo test / libtest: pretty (`test x ... ok`), terse (dots + failures list), json events, build errors."""

from __future__ import annotations

import re

from contextweaver.types import TestStatus
from contextweaver.validation.parsers.base import RunnerParser
from contextweaver.validation.report import TestReport, record

_RESULT = re.compile(
    r"^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored; (\d+) measured; (\d+) filtered out",
    re.M,
)
_TEST = re.compile(r"^test (.+?) \.\.\. (ok|FAILED|ignored|bench:)", re.M)
_FAILURES = re.compile(r"^failures:\n((?: {4}\S[^\n]*\n)+)", re.M)
_STDOUT_HEADER = re.compile(r"^---- (.+?) stdout ----$", re.M)
_JSON_TEST = re.compile(
    r'^\{\s*"type":\s*"test",\s*"event":\s*"(ok|failed|ignored)",\s*"name":\s*"([^"]+)"', re.M
)
_JSON_SUITE = re.compile(
    r'^\{\s*"type":\s*"suite",\s*"event":\s*"(ok|failed)",\s*"passed":\s*(\d+),\s*"failed":\s*(\d+),'
    r'\s*"ignored":\s*(\d+)',
    re.M,
)
_BUILD_FAILED = re.compile(r"^error: could not compile `([^`]+)`", re.M)
_RUNNING = re.compile(r"^running \d+ tests?$", re.M)
_STATUSES = {
    "ok": TestStatus.PASSED,
    "FAILED": TestStatus.FAILED,
    "failed": TestStatus.FAILED,
    "ignored": TestStatus.SKIPPED,
    "bench:": TestStatus.PASSED,
}


class CargoParser(RunnerParser):
    """Each test binary prints `running N tests` ... `test result:`; totals add up over binaries."""

    runner = "cargo"
    family = "cargo"
    command_pattern = re.compile(r"\bcargo\s+(?:\+\S+\s+)?(?:test|nextest)\b")
    hints = ("running ", "test result: ", '"type":', "could not compile")
    marker_pattern = re.compile(
        r"^running \d+ tests?$|^test result: (?:ok|FAILED)\. |^\{\s*\"type\":\s*\"(?:suite|test)\"", re.M
    )

    def detect(self, text: str, command: str = "") -> bool:
        if super().detect(text, command):
            return True
        return self.command_matches(command) and bool(_BUILD_FAILED.search(text))

    def parse(self, text: str, command: str = "") -> TestReport | None:
        tests: dict[str, TestStatus] = {}
        for match in _TEST.finditer(text):
            record(tests, match.group(1), _STATUSES[match.group(2)])
        for match in _JSON_TEST.finditer(text):
            record(tests, match.group(2), _STATUSES[match.group(1)])
        for block in _FAILURES.finditer(text):
            for name in block.group(1).split("\n"):
                if name.strip():
                    record(tests, name.strip(), TestStatus.FAILED)
        for header in _STDOUT_HEADER.finditer(text):
            record(tests, header.group(1), TestStatus.FAILED)
        totals: dict[str, int] | None = None
        failed = False
        for result in _RESULT.finditer(text):
            passed, failures, ignored, measured, filtered = (int(g) for g in result.groups()[1:])
            run = {"passed": passed, "failed": failures, "skipped": ignored}
            run |= {"measured": measured, "filtered": filtered}
            totals = {key: (totals or {}).get(key, 0) + value for key, value in run.items()}
            failed |= result.group(1) == "FAILED"
        for suite in _JSON_SUITE.finditer(text):
            run = {
                "passed": int(suite.group(2)),
                "failed": int(suite.group(3)),
                "skipped": int(suite.group(4)),
            }
            totals = {key: (totals or {}).get(key, 0) + value for key, value in run.items()}
            failed |= suite.group(1) == "failed"
        for build in _BUILD_FAILED.finditer(text):
            record(tests, f"{build.group(1)}.[build failed]", TestStatus.ERROR)
            failed = True
        runs = len(_RUNNING.findall(text)) + len(
            re.findall(r'"type":\s*"suite",\s*"event":\s*"started"', text)
        )
        closers = len(_RESULT.findall(text)) + len(_JSON_SUITE.findall(text))
        if not tests and totals is None and not runs:
            return None
        return TestReport(
            runner=self.runner,
            tests=tests,
            totals=totals,
            complete=closers >= runs and (closers > 0 or bool(_BUILD_FAILED.search(text))),
            failed_signal=failed or any(status.is_failure for status in tests.values()),
        )
