"""parse_observation: clean the observation, detect runners cheaply, parse only the ones detected."""

from __future__ import annotations

from functools import cache

from contextweaver.validation.parsers.base import RunnerParser
from contextweaver.validation.registry import DETECTION_ORDER, PARSERS
from contextweaver.validation.report import TestReport, merge_reports
from contextweaver.validation.text import CleanText, clean_observation


@cache
def _parser(name: str) -> RunnerParser:
    parser: RunnerParser = PARSERS.get(name)()
    return parser


def parsers_in_order() -> list[RunnerParser]:
    """Registered parsers, the detection order first, then any registered later."""
    names = [name for name in DETECTION_ORDER if name in PARSERS.names()]
    names += [name for name in PARSERS.names() if name not in names]
    return [_parser(name) for name in names]


def parse_clean(clean: CleanText, command: str = "") -> TestReport | None:
    """Run every detected parser (one per family) and merge their reports in output order."""
    text = clean.text
    found: list[tuple[int, TestReport]] = []
    families: set[str] = set()
    for parser in parsers_in_order():
        if parser.family and parser.family in families:
            continue
        if not parser.detect(text, command):
            continue
        report = parser.parse(text, command)
        if report is None:
            continue
        if parser.family:
            families.add(parser.family)
        found.append((_first_anchor(parser, text), report))
    found.sort(key=lambda pair: pair[0])
    return merge_reports(report for _, report in found)


def _first_anchor(parser: RunnerParser, text: str) -> int:
    match = parser.marker_pattern.search(text)
    return match.start() if match else len(text)


def parse_observation(observation: str, command: str = "") -> TestReport | None:
    """Test results in one observation, or None when no test-runner output is detected."""
    return parse_clean(clean_observation(observation), command)
