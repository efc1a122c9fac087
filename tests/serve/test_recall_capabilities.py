"""A recall capability is found by the store's capability index (issue 44: an unknown one made the proxy
compute the capability of every stored session, a full store scan per request). A proxy stores a
session's capability when it creates it and fills those of older sessions once, at start. Timing:
benchmarks/recall_lookup.py."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from contextweaver.serve.sessions.recall import SECRET, RecallRoute, capability
from contextweaver.store import Store
from contextweaver.store.sqlite import SQLiteStore, SQLiteTx

ROOT = [{"role": "user", "content": "task"}]
MORE = "`curl -s http://proxy/contextweaver/recall/CAP/{handle}?page={page}`"


class CountingTx(SQLiteTx):
    def __init__(self, tx: SQLiteTx, rows: list[int]) -> None:
        super().__init__(tx._db)
        self._rows = rows

    def execute(self, sql: str, params: Any = ()) -> list[dict[str, Any]]:
        found = super().execute(sql, params)
        self._rows.append(len(found))
        return found


class CountingStore(SQLiteStore):
    """A real SQLite store that counts the rows its queries return."""

    rows: list[int]

    @contextmanager
    def _transaction(self, begin: str) -> Iterator[SQLiteTx]:
        with super()._transaction(begin) as tx:
            yield CountingTx(tx, self.__dict__.setdefault("rows", []))


def cap_of(store: Store, session_id: str) -> str:
    return capability(store.secret(SECRET).encode(), session_id)


def test_an_unknown_capability_is_a_404_that_reads_no_session(tmp_path: Path) -> None:
    store = CountingStore(tmp_path / "s.db")
    for n in range(40):
        store.create_session(f"s-{n}", ROOT, {})
    route = RecallRoute(store)  # fills the capabilities of the sessions stored without one
    store.rows = []
    status, _ = route.answer("0" * 24, "1", "1", MORE)
    assert status == 404
    assert sum(store.rows) == 0, store.rows  # the old lookup read all 40 sessions
    late = cap_of(store, "late")
    store.create_session("late", ROOT, {}, capability=late)  # as the proxy creates one
    store.rows = []
    found = route._session(late)
    assert found is not None and found.id == "late" and store.rows == [1]
    store.close()


def test_sessions_stored_before_the_capability_column_are_found(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    for n in range(3):
        store.create_session(f"s-{n}", ROOT, {})
    store.close()
    with sqlite3.connect(tmp_path / "s.db") as db:  # as migration 7 leaves rows it found
        db.execute("UPDATE cw_sessions SET capability = NULL")
    store = SQLiteStore(tmp_path / "s.db")
    route = RecallRoute(store)
    found = route._session(cap_of(store, "s-1"))
    assert found is not None and found.id == "s-1"
    assert route._session(cap_of(store, "s-1")[:-1] + "x") is None
    assert store.fill_capabilities(lambda session_id: "unused") == 0  # each session filled once
    store.close()


def test_the_lookup_reads_the_capability_index(tmp_path: Path) -> None:
    SQLiteStore(tmp_path / "s.db").close()
    with sqlite3.connect(tmp_path / "s.db") as db:
        plan = " ".join(
            str(row[-1])
            for query in ("capability = ? LIMIT 1", "capability IS NULL LIMIT 10")
            for row in db.execute(
                f"EXPLAIN QUERY PLAN SELECT * FROM cw_sessions WHERE {query}", ("a",)[: query.count("?")]
            )
        )
    assert plan.count("USING INDEX cw_sessions_by_capability") == 2, plan
