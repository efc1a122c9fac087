"""RSpec's JSON formatter (`rspec --format json`): one document with examples and a summary."""

from __future__ import annotations

import json
import re
from typing import Any

from contextweaver.records import TestStatus
from contextweaver.validation.parsers.base import RunnerParser
from contextweaver.validation.report import TestReport, closing_report, merge_reports, record

_EXAMPLES = re.compile(r'"examples":\s*\[')
_STATUSES = {"passed": TestStatus.PASSED, "failed": TestStatus.FAILED, "pending": TestStatus.SKIPPED}
_MAX_STARTS = 20
"""How many `{` before the examples key are tried as the document's start (text may precede it)."""


def example_id(example: dict[str, Any]) -> str:
    """`file::full description`: stable when the agent edits lines above the example (line numbers and
    rspec's positional ids are not)."""
    description = str(example.get("full_description") or example.get("description") or example.get("id"))
    path = example.get("file_path")
    return f"{path}::{description}" if path else description


class RspecJsonParser(RunnerParser):
    """Reads the whole document with the json module: it is one object, printed at the end of a run."""

    runner = "rspec"
    family = "rspec"
    command_pattern = re.compile(r"\brspec\b")
    failure_marker = re.compile(r'"status":\s*"failed"')
    marker_pattern = _EXAMPLES

    def parse(self, text: str, command: str = "") -> TestReport | None:
        reports = [self._run(document) for document in _documents(text)]
        return merge_reports(reports)

    def _run(self, document: dict[str, Any]) -> TestReport:
        tests: dict[str, TestStatus] = {}
        for example in document["examples"]:
            status = _STATUSES.get(str(example.get("status")), TestStatus.ERROR)
            record(tests, example_id(example), status)
        summary = document.get("summary")
        totals = _totals(summary) if isinstance(summary, dict) else None
        return closing_report(self.runner, tests, totals)


def _documents(text: str) -> list[dict[str, Any]]:
    """Every RSpec document in the text (one per run), each found from its `"examples": [` key by
    trying the nearest `{` before it."""
    decoder = json.JSONDecoder()
    documents: list[dict[str, Any]] = []
    covered = 0
    for key in _EXAMPLES.finditer(text):
        if key.start() < covered:
            continue  # a key inside a document already read
        start = key.start()
        for _ in range(_MAX_STARTS):
            start = text.rfind("{", covered, start)
            if start < 0:
                break
            try:
                data, end = decoder.raw_decode(text, start)
            except (ValueError, RecursionError):  # RecursionError: hostile nesting
                continue
            if _is_rspec(data):
                documents.append(data)
                covered = end
                break
    return documents


def _is_rspec(data: Any) -> bool:
    """RSpec's shape: an examples list of objects with a status, beside its summary or version."""
    if not isinstance(data, dict) or not isinstance(data.get("examples"), list):
        return False
    if not ("summary" in data or "version" in data):
        return False
    return all(isinstance(example, dict) and "status" in example for example in data["examples"])


def _totals(summary: dict[str, Any]) -> dict[str, int] | None:
    counts = {
        key: summary.get(field)
        for key, field in (
            ("total", "example_count"),
            ("failed", "failure_count"),
            ("skipped", "pending_count"),
            ("error", "errors_outside_of_examples_count"),
        )
    }
    if not isinstance(counts["total"], int):
        return None
    totals = {key: value for key, value in counts.items() if isinstance(value, int)}
    totals["passed"] = totals["total"] - totals.get("failed", 0) - totals.get("skipped", 0)
    return totals
