"""The joined marker pattern: where it finds nothing, no parser that detects by its marker alone fires."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from contextweaver.validation.observation import _parser, marker_gate
from contextweaver.validation.parsers.base import framed
from contextweaver.validation.registry import PARSERS
from contextweaver.validation.text import clean_observation

from .fuzz_inputs import FAILURES, FRAGMENTS

OBSERVATIONS = (
    Path(__file__).parents[2]
    / ".."
    / "shared"
    / "data"
    / "test_logs"
    / "agent-observations"
    / "observations.jsonl"
)


def _texts() -> list[str]:
    texts = ["".join(parts) for parts in FRAGMENTS.values()] + [
        f"noise\n{line}" for line in FAILURES.values()
    ]
    texts += ["", "plain output\nno runner here\n", "   0  def f(a): return g(a)\n" * 30]
    if OBSERVATIONS.exists():
        texts += [json.loads(line).get("observation", "") for line in OBSERVATIONS.read_text().splitlines()]
    return texts


def test_the_gate_finds_a_marker_wherever_a_marker_only_parser_detects() -> None:
    names = tuple(PARSERS.names())
    gate, plain = marker_gate(names)
    assert gate is not None and plain.count(True) >= 10  # most parsers detect by their marker alone
    fired = 0
    for text in map(framed, (clean_observation(t).text for t in _texts())):
        detected = any(_parser(n).detect(text) for n, alone in zip(names, plain, strict=True) if alone)
        assert detected <= bool(gate.search(text)), text[:200]
        fired += detected
    assert fired >= len(FRAGMENTS) - 3  # the runner fragments are detected: the check is not vacuous


def test_markers_that_cannot_be_joined_safely_give_no_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    names = tuple(PARSERS.names())
    parser = _parser(names[0])
    monkeypatch.setattr(type(parser), "marker_pattern", re.compile(r"\n(a)b\1"))  # a back-reference
    marker_gate.cache_clear()
    try:
        assert marker_gate(names)[0] is None
    finally:
        monkeypatch.undo()
        marker_gate.cache_clear()
