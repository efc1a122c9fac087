"""mocha: the spec reporter (✓ / N) / - lines under describe blocks, `N passing` totals) and the json reporter."""

from __future__ import annotations

import json
import re
from typing import Any

from contextweaver.records import TestStatus
from contextweaver.validation.parsers.base import RunnerParser, bounded_int, framed
from contextweaver.validation.report import TestReport, any_failure, record

_SUMMARY = re.compile(r"\n *+(\d+) (passing \(\d+(?:\.\d+)?\s?(?:ms|s|m)\)|failing|pending)(?=\n)")
"""The closing `N passing (time)`, `N failing`, `N pending` lines, read in one pass."""
_LINE = re.compile(r"\n( ++)(?:[✓✔√] ([^\n]+)|\d+\) ([^\n]+)|- ([^\n]+)|(\S[^\n]*))(?=\n)")
"""Groups: indent, passed title (+ duration), failed title, pending title, other line (each capture
costs: the failure number is not kept)."""
_DURATION = re.compile(r"\d+ ?ms\)")
"""What follows the last ` (` of a passed title when mocha printed the test's duration."""
_JSON_START = re.compile(r'\n\{\s*"stats":\s*\{')


class MochaParser(RunnerParser):
    """Ids are mocha's full titles: describe titles and the test title joined by spaces."""

    passing_rows = (r"[✓✔√] [^\n]*",)
    runner = "mocha"
    family = "mocha"
    command_pattern = re.compile(r"\bmocha\b")
    failure_marker = re.compile(r"\n *+[1-9]\d* failing(?=\n)")
    hints = (" passing", " failing", '"stats"')
    marker_pattern = re.compile(r'\n(?: *+\d++ (?:passing \(\d|failing(?=\n))|\{\s*"stats":\s*\{)')

    def parse(self, text: str, command: str = "") -> TestReport | None:
        text = framed(text)
        start = _JSON_START.search(text)
        if start:
            report = self._json(text[start.start() + 1 :])
            if report is not None:
                return report
        summary: dict[str, re.Match[str]] = {}
        for line in _SUMMARY.finditer(text):
            summary.setdefault(line.group(2).split(" ", 1)[0], line)
        passing = summary.get("passing")
        listing_end = passing.start() if passing else len(text)
        tests: dict[str, TestStatus] = {}
        describes: list[tuple[int, str]] = []
        top = -1
        """The innermost describe's indent: a line indented no deeper closes it."""
        prefix = ""
        """The describe titles above the line, each followed by a space (built once per block)."""
        passed_status, failed_status = TestStatus.PASSED, TestStatus.FAILED
        # A state machine over the lines reads better than a table here: a title's describe blocks are
        # the stack of less-indented lines above it, which only a running stack keeps in one pass.
        # listing_end + 1: the newline that ends the listing's last line
        for spaces, passed, failed, pending, other in _LINE.findall(text, 0, listing_end + 1):
            if top >= len(spaces):
                indent = len(spaces)
                while describes and describes[-1][0] >= indent:
                    describes.pop()
                top = describes[-1][0] if describes else -1
                prefix = "".join(f"{name} " for _, name in describes)
            if passed:
                title, status = passed, passed_status
                if passed.endswith("ms)"):
                    head, _, tail = passed.rpartition(" (")
                    title = head if head and _DURATION.fullmatch(tail) else passed
            elif other:
                top = len(spaces)
                describes.append((top, other.strip()))
                prefix = "".join(f"{name} " for _, name in describes)
                continue
            elif failed:
                title, status = failed, failed_status
            else:
                title, status = pending, TestStatus.SKIPPED
            test = prefix + title.strip()
            if tests.setdefault(test, status) is not status:  # seen before: the severer status stays
                record(tests, test, status)
        failing = summary.get("failing")
        skipped = summary.get("pending")
        if passing is None and failing is None and not tests:
            return None
        totals = None
        if passing or failing:
            totals = {"passed": bounded_int(passing.group(1)) if passing else 0}
            if failing:
                totals["failed"] = bounded_int(failing.group(1))
            if skipped:
                totals["skipped"] = bounded_int(skipped.group(1))
        return TestReport(
            runner=self.runner,
            tests=tests,
            totals=totals,
            complete=passing is not None,
            failed_signal=bool(failing) or any_failure(tests.values()),
        )

    def _json(self, text: str) -> TestReport | None:
        """mocha --reporter json prints one object: stats plus passes / failures / pending lists."""
        try:
            data: Any = json.JSONDecoder().raw_decode(text)[0]
        except (ValueError, RecursionError):  # RecursionError: hostile nesting
            return None
        if not isinstance(data, dict) or not isinstance(data.get("stats"), dict):
            return None
        tests: dict[str, TestStatus] = {}
        groups = (
            ("passes", TestStatus.PASSED),
            ("pending", TestStatus.SKIPPED),
            ("failures", TestStatus.FAILED),
        )
        for key, status in groups:
            for test in data.get(key) or []:
                if isinstance(test, dict) and isinstance(test.get("fullTitle"), str):
                    record(tests, test["fullTitle"], status)
        stats = data["stats"]
        totals = {
            name: int(stats[key])
            for key, name in (("passes", "passed"), ("failures", "failed"), ("pending", "skipped"))
            if isinstance(stats.get(key), int)
        }
        return TestReport(
            runner=self.runner,
            tests=tests,
            totals=totals,
            complete=True,
            failed_signal=bool(totals.get("failed")) or any_failure(tests.values()),
        )
