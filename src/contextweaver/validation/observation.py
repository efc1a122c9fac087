"""parse_observation: clean the observation, detect runners cheaply, parse only the ones detected."""

from __future__ import annotations

import logging
import re
from functools import cache

from contextweaver.validation.parsers.base import NEVER, RunnerParser, framed
from contextweaver.validation.registry import PARSERS
from contextweaver.validation.report import TestReport, merge_reports
from contextweaver.validation.text import CleanText, clean_observation

_log = logging.getLogger(__name__)
_FAILED: set[str] = set()
"""Runners whose parser raised once already: logged the first time only."""


def run_parser(parser: RunnerParser, text: str, command: str = "") -> TestReport | None:
    """The parser's report, or None when it does not detect the output or raises: the boundary every
    parser runs behind, so one odd line drops that runner's report, never the step."""
    try:
        return parser.parse(text, command) if parser.detect(text, command) else None
    except Exception:
        _dropped(parser)
        return None


def detects(parser: RunnerParser, text: str, command: str = "") -> bool:
    """`parser.detect` behind the same boundary (a detector that raises detects nothing)."""
    try:
        return parser.detect(text, command)
    except Exception:
        _dropped(parser)
        return False


def _dropped(parser: RunnerParser) -> None:
    if parser.runner not in _FAILED:
        _FAILED.add(parser.runner)
        _log.warning("the %s parser failed on an output; its report is dropped", parser.runner, exc_info=True)


@cache
def _parser(name: str) -> RunnerParser:
    parser: RunnerParser = PARSERS.get(name)()
    return parser


def parsers_in_order() -> list[RunnerParser]:
    """Registered parsers in the registry's order, which is the detection order."""
    return [_parser(name) for name in PARSERS.names()]


@cache
def marker_gate(names: tuple[str, ...]) -> tuple[re.Pattern[str] | None, tuple[bool, ...]]:
    """One pattern matching wherever any marker-only parser's marker does, and per parser (in order)
    whether it is one: a parser that detects by its marker alone cannot fire where the gate finds
    nothing, so most outputs (no test run) cost one search instead of one per parser. None when the
    markers cannot be joined without changing a match (flags differ, back-references, a bad join)."""
    parsers = [_parser(name) for name in names]
    plain = tuple(type(p).detect is RunnerParser.detect and p.marker_pattern is not NEVER for p in parsers)
    patterns = [p.marker_pattern for p, alone in zip(parsers, plain, strict=True) if alone]
    if len({p.flags for p in patterns}) != 1 or any(re.search(r"\\\d|\(\?P=", p.pattern) for p in patterns):
        return None, plain
    try:
        gate = re.compile("|".join(f"(?:{p.pattern})" for p in patterns), patterns[0].flags)
    except re.error:
        return None, plain
    return gate, plain


def parse_clean(clean: CleanText, command: str = "") -> TestReport | None:
    """Run every detected parser (one per family) and merge their reports in output order."""
    text = framed(clean.text)
    found: list[tuple[int, TestReport]] = []
    families: set[str] = set()
    names = tuple(PARSERS.names())
    gate, plain = marker_gate(names)
    marked = gate is None or gate.search(text) is not None
    for parser, alone in zip(map(_parser, names), plain, strict=True):
        if parser.family and parser.family in families:
            continue
        if alone and not marked:
            continue
        report = run_parser(parser, text, command)
        if report is None:
            continue
        if parser.family:
            families.add(parser.family)
        found.append((_first_anchor(parser, text), report))
    found.sort(key=lambda pair: pair[0])
    return merge_reports(report for _, report in found)


def _first_anchor(parser: RunnerParser, text: str) -> int:
    """Where the runner's output begins (a marker's leading newline belongs to the line before)."""
    match = parser.marker_pattern.search(text)
    if match is None:
        return len(text)
    return match.start() + 1 if text.startswith("\n", match.start()) else match.start()


def parse_observation(observation: str, command: str = "") -> TestReport | None:
    """Test results in one observation, or None when no test-runner output is detected."""
    return parse_clean(clean_observation(observation), command)
