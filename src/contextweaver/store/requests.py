"""The columns of a forwarded request's row (`cw_requests`) and the sums a session's cost is read from.

A row is written by the proxy once the answer has passed (serve/ledger/metering.py): the tokens it sent and
the history's, the simulated prompt-cache cost both ways, and the provider's usage as billed (NULL
when the answer reported none). Sums are taken in the database, so listing sessions reads one row each.
"""

from __future__ import annotations

REQUEST_COLUMNS = (
    "at", "wire", "status", "streamed", "step", "added", "latency_ms", "sent_tokens", "full_tokens",
    "tool_tokens", "cached_tokens", "sim_sent", "sim_full", "usage", "input_tokens", "cache_read_tokens",
    "cache_write_tokens", "output_tokens", "billed", "passthrough", "miss_reason", "fallback", "test_status",
    "cut",
)  # fmt: skip
SUMMED = (
    "input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens", "billed", "passthrough",
    "sent_tokens", "full_tokens", "cached_tokens",
)  # fmt: skip
TOTALS = ", ".join(
    [
        "COUNT(*) AS requests",
        "SUM(CASE WHEN usage = 'reported' THEN 1 ELSE 0 END) AS reported",
        "SUM(CASE WHEN cut IS NOT NULL THEN 1 ELSE 0 END) AS cuts",
        "MAX(at) AS last_at",
        *(f"COALESCE(SUM({name}), 0) AS {name}" for name in SUMMED),
    ]
)
"""Per session: requests, those whose usage was reported, cuts, and the sums of the counted columns."""
