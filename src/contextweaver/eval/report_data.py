"""What an eval report holds (its rows, verdicts, frontier, images, header), read by each of its views:
the terminal and the files in report.py, the HTML page in html.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from contextweaver.eval import aggregate, checks
from contextweaver.eval.frontier_report import FrontierRow


@dataclass
class Report:
    rows: list[aggregate.Row]
    groups: list[aggregate.GroupRow]
    cost: list[checks.CostVerdict]
    arms: list[checks.ArmVerdict]
    meta: dict[str, Any] = field(default_factory=dict)
    images: dict[str, bytes] = field(default_factory=dict)
    failures: list[dict[str, Any]] = field(default_factory=list)
    """Failure records of the runner, in its order."""
    frontier: list[FrontierRow] = field(default_factory=list)
    """Each strategy against the recency frontier (unbounded), with recall by evidence distance."""


def meta_text(key: str, value: Any) -> str:
    """A header entry as a sentence: the cache prices read as prices, never as a Python dict."""
    if key == "cache_prices" and isinstance(value, dict):
        parts = []
        for name, p in value.items():
            if isinstance(p, dict):
                step = "" if p["increment"] == 1 else f" in steps of {p['increment']}"
                parts.append(
                    f"{name}: cache reads {p['read']}x, writes {p['write']}x the input price, for prefixes of "
                    f"{p['min_prefix']:,}+ tokens{step} ({p['source']})"
                )
        return "; ".join(parts) + (f"; taken {value['taken']}" if "taken" in value else "")
    if isinstance(value, dict):
        return ", ".join(f"{k} {meta_text(str(k), v)}" for k, v in value.items())
    return str(value)
