"""Runs a budget refused: a run whose system prompt and task exceed a budget, or with a step the budget cannot
hold beside them, cannot be replayed at it (every context keeps them verbatim, and the newest step). Such a
run is left out at that budget, measured at the others and named here with the least budget that holds it,
instead of failing the run or the whole evaluation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

SHOWN = 5
"""Runs named per budget; the rest are counted."""


def refused_runs(results: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, dict[str, int]]]:
    """Per budget key, the refused runs (trajectory -> root and least budget), each run once."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for result in results:
        for budget, why in result.get("refused", {}).items():
            out.setdefault(budget, {})[result["trajectory"]] = why
    return out


def refused_lines(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per budget that refused runs: how many of all, and the first few with what would hold them."""
    runs = len({result["trajectory"] for result in results})
    lines = []
    for budget, refused in refused_runs(results).items():
        named = [
            f"{run} (root {why['root']:,} tokens: -b {why['least']})"
            for run, why in sorted(refused.items())[:SHOWN]
        ]
        more = f" and {len(refused) - SHOWN} more" if len(refused) > SHOWN else ""
        lines.append(
            f"at {budget}: {len(refused)} of {runs} runs refused (their system prompt and task, or a step beside "
            f"them, above the budget), measured at the other budgets: {', '.join(named)}{more}"
        )
    return lines
