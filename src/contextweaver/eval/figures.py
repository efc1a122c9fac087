"""A figure as every view of the eval shows it (the terminal tables, the frontier lines, the HTML report)."""

from __future__ import annotations

NOT_MEASURED = "n/a"


def number(value: float | int | None, pattern: str) -> str:
    """A figure as the terminal, the HTML report and the frontier lines show it; None or NaN (nothing
    measured, e.g. no cut to judge) reads `n/a`, never `nan`."""
    if value is None or value != value:
        return NOT_MEASURED
    return pattern.format(value)
