"""RSpec's text formatters (progress, documentation): `N examples, M failures` and the `rspec ./spec/x:12 #` list."""

from __future__ import annotations

import re

from contextweaver.records import TestStatus
from contextweaver.validation.parsers.base import RunnerParser, bounded_int, framed
from contextweaver.validation.report import TestReport, add_totals, closing_report, record

_SUMMARY = re.compile(
    r"\n(\d++) examples?, (\d++) failures?(?:, (\d++) pending)?(?:, (\d++) errors? occurred outside of examples)?"
)
_FAILED = re.compile(r"\nrspec (\./\S+?)(?::\d++|\[[\d:,]++\]) # ([^\n]++)")
"""`rspec ./spec/cart_spec.rb:12 # Cart removes items`: ids are `file::description`, as the JSON reader's."""


class RspecTextParser(RunnerParser):
    """Only failing examples are named (in the rerun list); the summary line closes a run."""

    runner = "rspec"
    family = "rspec-text"
    """Not the JSON reader's family: a run printing both formats is read by both."""
    command_pattern = re.compile(r"\brspec\b")
    failure_marker = re.compile(r"\n\d++ examples?, [1-9]\d* failures?|\nrspec \./\S+:\d++ # ")
    hints = (" example",)
    marker_pattern = re.compile(r"\n\d++ examples?, \d++ failures?")

    def parse(self, text: str, command: str = "") -> TestReport | None:
        text = framed(text)
        tests: dict[str, TestStatus] = {}
        for path, description in _FAILED.findall(text):
            record(tests, f"{path}::{description.strip()}", TestStatus.FAILED)
        totals: dict[str, int] | None = None
        for examples, failures, pending, outside in _SUMMARY.findall(text):
            run = {
                "total": bounded_int(examples),
                "failed": bounded_int(failures),
                "skipped": bounded_int(pending or "0"),
            }
            run["error"] = bounded_int(outside or "0")
            run["passed"] = run["total"] - run["failed"] - run["skipped"]
            totals = add_totals(totals, run)
        if totals is None and not tests:
            return None
        return closing_report(self.runner, tests, totals)
