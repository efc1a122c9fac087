"""The columns of a forwarded request's row (`cw_requests`) and the sums a session's cost is read from.

A row is written by the proxy before the request goes upstream, marked missing ("no answer recorded"),
and completed once the answer has passed (serve/ledger/metering.py): so a proxy killed mid-request leaves
a row that says so. It holds the tokens sent and the history's, the simulated prompt-cache cost both
ways, and the provider's usage as billed (NULL when the answer reported none), each count at most
MAX_TOKENS; `usage_note` says why usage is missing, malformed or partial, and any raw count clamped.
Sums are taken in the database, so listing sessions reads one row each.

A request forwarded outside any session (passed through as sent, or before its conversation had a step
to store: serve/routes.py says which) is a row of `cw_passed` instead, under its owner: the same life,
the same usage columns, and `reason` for why no session holds it. Both are written as `RowWrite`s, many to a
transaction (serve/ledger/row_writer.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

REQUEST_COLUMNS = (
    "at", "wire", "status", "streamed", "step", "added", "latency_ms", "sent_tokens", "full_tokens",
    "tool_tokens", "cached_tokens", "sim_sent", "sim_full", "usage", "input_tokens", "cache_read_tokens",
    "cache_write_tokens", "output_tokens", "billed", "passthrough", "miss_reason", "fallback", "test_status",
    "cut", "usage_note",
)  # fmt: skip
MAX_TOKENS = 1_000_000_000
"""Most tokens one count of one answer is taken as: 500 times the largest context window offered (2M).
A larger count is clamped to it and the raw value noted (issue 53: 2^63 did not fit the store, and two
answers of 2^62 overflowed a session's sums, failing its owner's listing)."""
COUNTED = ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens")
SUMMED = (
    "input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens", "billed", "passthrough",
    "sent_tokens", "full_tokens", "cached_tokens",
)  # fmt: skip
PASSED_COLUMNS = (
    "at", "wire", "status", "streamed", "latency_ms", "usage", "input_tokens", "cache_read_tokens",
    "cache_write_tokens", "output_tokens", "billed", "passthrough", "miss_reason", "usage_note", "reason",
)  # fmt: skip
"""The columns of a request forwarded outside any session (`cw_passed`, beside its `owner`)."""
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
PASSED_TOTALS = ", ".join(
    [
        "COUNT(*) AS requests",
        "SUM(CASE WHEN usage = 'reported' THEN 1 ELSE 0 END) AS reported",
        "MAX(at) AS last_at",
        *(f"COALESCE(SUM({name}), 0) AS {name}" for name in SUMMED if name in PASSED_COLUMNS),
    ]
)
"""Per owner, over its requests outside sessions: the same sums (nothing was cut or simulated)."""
SESSION_COLUMNS = "cw_sessions.*, (SELECT wire FROM cw_requests r WHERE r.session_id = cw_sessions.id ORDER BY r.id LIMIT 1) AS wire"
"""A session's columns and the wire of its first forwarded request, by the requests' index: a session of
the Anthropic or Responses wire is shown as such, not as the `openai` its tool calls are read in."""


@dataclass(frozen=True)
class RowWrite:
    """One write of the usage ledger: a new row (`request_id` None) or the columns set on row `request_id`;
    a row of session `session_id`, or when it is None, of `owner`'s rows outside sessions."""

    row: dict[str, Any]
    session_id: str | None = None
    owner: str | None = None
    request_id: int | None = None

    def __str__(self) -> str:
        if self.session_id is not None:
            return f"a request of session {self.session_id}"
        return f"a request outside sessions (owner {(self.owner or 'none')[:8]})"
