"""JSON Lines formats split records on "\\n" only: U+0085, U+2028 and U+2029 are text inside a string
(`str.splitlines` would split on them), so a run whose output holds one is read whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contextweaver.examples import example_path
from contextweaver.formats import load_trajectory

FIXTURES = Path(__file__).parent / "fixtures"
ODD = "a\u2028b\u0085c\u2029d"
RUNS = {
    "jsonl": example_path(),
    "claude-code": FIXTURES / "claude_code_session.jsonl",
    "codex": FIXTURES / "codex_rollout.jsonl",
}


def _with_separators(value: Any) -> Any:
    """Every string of prose (it holds a space and is long: not a type, role, id or timestamp) with ODD added."""
    if isinstance(value, str):
        return value + ODD if " " in value and len(value) > 20 else value
    if isinstance(value, dict):
        return {key: _with_separators(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_with_separators(item) for item in value]
    return value


@pytest.mark.parametrize("fmt", sorted(RUNS))
def test_a_run_holding_unicode_line_separators_reads_as_the_plain_run(fmt: str, tmp_path: Path) -> None:
    original = RUNS[fmt]
    odd = tmp_path / original.name
    lines = [json.loads(line) for line in original.read_text(encoding="utf-8").split("\n") if line.strip()]
    odd.write_text(
        "".join(json.dumps(_with_separators(v), ensure_ascii=False) + "\n" for v in lines), "utf-8"
    )
    assert "\u2028" in odd.read_text(encoding="utf-8")  # raw in the file, not escaped

    plain, read = load_trajectory(original), load_trajectory(odd)
    assert read.format == plain.format == fmt
    assert len(read.steps) == len(plain.steps) > 0
    assert any(ODD in s.thought + s.action + s.observation for s in read.steps)
