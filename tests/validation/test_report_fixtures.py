"""Reports and runs of the families the parsers once missed, written from the runners' documented
formats (tests/validation/fixtures, their truth in expected.json): verdict, reason and every test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contextweaver.records import ValidationStatus
from contextweaver.validation import TestTracker, parse_observation

FIXTURES = Path(__file__).with_name("fixtures")
EXPECTED: dict[str, dict] = json.loads((FIXTURES / "expected.json").read_text())  # type: ignore[type-arg]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_verdict_and_tests(name: str) -> None:
    want = EXPECTED[name]
    text = (FIXTURES / name).read_text()
    verdict = TestTracker().observe(1, want["command"], text)
    assert verdict.status is ValidationStatus(want["verdict"]), verdict.reason
    assert want.get("reason_has", "") in verdict.reason
    report = parse_observation(text, want["command"])
    got = {test: status.value for test, status in (report.tests.items() if report else ())}
    assert got == want["tests"]
    if "totals" in want:
        assert report is not None and report.totals == want["totals"]


def test_every_fixture_has_its_truth() -> None:
    files = {path.name for path in FIXTURES.iterdir() if path.name != "expected.json"}
    assert files == set(EXPECTED)
