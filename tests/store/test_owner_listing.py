"""A caller's sessions are listed by the owner index, a page at a time, with their request totals (issue 44:
the listing read all 20,100 sessions of the store to show a caller its 2). Timing: benchmarks/session_listing.py."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from contextweaver.store import Store, open_store
from contextweaver.store.requests import RowWrite

ROOT = [{"role": "user", "content": "task"}]


def fill(store: Store) -> None:
    for n in range(5):
        store.create_session(f"mine-{n}", ROOT, {}, owner="alice")
    store.create_session("theirs", ROOT, {}, owner="bob")
    store.create_session("anonymous", ROOT, {})
    for session_id in ("mine-1", "mine-1", "theirs"):
        store.record_request(session_id, {"at": 1.0, "wire": "chat", "status": 200, "streamed": 0, "step": 1,
                                          "added": 1, "latency_ms": 1.0, "sent_tokens": 10, "full_tokens": 20,
                                          "tool_tokens": 0, "cached_tokens": 0, "sim_sent": 0.0, "sim_full": 0.0,
                                          "usage": "absent"})  # fmt: skip


def test_a_page_of_one_owners_sessions_and_its_total(store: Store) -> None:
    fill(store)
    page, total = store.sessions_of("alice", offset=1, limit=2)
    assert [info.id for info in page] == ["mine-1", "mine-2"] and total == 5
    assert [info.id for info in store.sessions_of(None)[0]] == ["anonymous"]
    assert store.sessions_of("nobody") == ([], 0)
    totals = store.owner_request_totals("alice")
    assert set(totals) == {"mine-1"} and totals["mine-1"]["requests"] == 2
    assert totals["mine-1"]["sent_tokens"] == 20
    assert store.owner_request_totals(None) == {}


def test_the_page_query_reads_the_index_not_the_table(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "s.db"))
    fill(store)
    store.close()
    with sqlite3.connect(tmp_path / "s.db") as db:
        plan = " ".join(str(row[-1]) for row in db.execute(
            "EXPLAIN QUERY PLAN SELECT * FROM cw_sessions WHERE owner = ? ORDER BY created_at, id LIMIT 10", ("a",)
        ))  # fmt: skip
    assert "USING INDEX cw_sessions_by_owner_created" in plan and "TEMP B-TREE" not in plan, plan


def test_rows_outside_sessions_are_each_owners_own(store: Store) -> None:
    """A request forwarded outside any session is a row under its owner: written missing, completed once,
    listed and summed per owner by the owner index, never another owner's."""
    pending = {"at": 1.0, "wire": "chat", "status": 0, "streamed": 1, "latency_ms": 0.5, "usage": "missing",
               "usage_note": "no answer recorded", "reason": "no-step-yet"}  # fmt: skip
    first, *_ = store.write_requests([RowWrite(pending, owner="alice"),
                                      RowWrite({**pending, "reason": "compaction"}, owner="alice"),
                                      RowWrite(pending, owner="bob"), RowWrite(pending)])  # fmt: skip
    answer = {"status": 200, "usage": "reported", "usage_note": None, "input_tokens": 7, "cache_read_tokens": 3,
              "cache_write_tokens": 0, "output_tokens": 2, "billed": 7.3, "passthrough": 7.3, "miss_reason": None}  # fmt: skip
    store.write_requests([RowWrite({**pending, **answer}, owner="alice", request_id=first)])
    rows = store.passed_requests("alice")
    assert [(row["reason"], row["usage"], row["input_tokens"]) for row in rows] == [
        ("no-step-yet", "reported", 7), ("compaction", "missing", None)]  # fmt: skip
    assert [row["owner"] for row in rows] == ["alice", "alice"]
    assert store.passed_requests("alice", after=first) == rows[1:]
    assert [row["owner"] for row in store.passed_requests(None)] == [None]
    mine = store.owner_passed_totals("alice")
    assert (mine["requests"], mine["reported"], mine["input_tokens"], mine["billed"]) == (2, 1, 7, 7.3)
    assert store.owner_passed_totals("nobody")["requests"] == 0
    assert {owner: one["requests"] for owner, one in store.passed_totals().items()} == {
        "alice": 2, "bob": 1, None: 1}  # fmt: skip
