"""The default store: one SQLite file in WAL mode, shared safely by threads and processes.

Every write is a `BEGIN IMMEDIATE` transaction committed with `synchronous=FULL`, so a step is on
disk before `append_step` returns and a process killed at any instant (SIGKILL, power loss after
the fsync) loses nothing it acknowledged. WAL lets `contextweaver sessions` read while a proxy
writes. The file may also hold the LLM response cache (table `llm_cache`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from contextweaver.store.rows import rows_of
from contextweaver.store.sql import SQLStore


class SQLiteTx:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        return list(rows_of(self._db.execute(sql, tuple(params))))


class SQLiteStore(SQLStore):
    """Sessions in one file; `synchronous` may be lowered to NORMAL to trade power-loss safety for speed."""

    def __init__(self, path: str | Path, *, synchronous: str = "FULL", busy_timeout: float = 30.0) -> None:
        self.path = Path(path)
        super().__init__(str(self.path))
        if synchronous.upper() not in ("FULL", "NORMAL", "EXTRA"):
            raise ValueError(f"synchronous must be FULL, EXTRA or NORMAL, not {synchronous!r}")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(
            str(self.path), isolation_level=None, check_same_thread=False, timeout=busy_timeout
        )
        mode = self._db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise RuntimeError(
                f"{self.path}: SQLite refused WAL mode ({mode}); is it on a network filesystem?"
            )
        self._db.execute(f"PRAGMA synchronous={synchronous.upper()}")
        self._db.execute("PRAGMA foreign_keys=ON")
        self.migrate()

    @contextmanager
    def _transaction(self, begin: str) -> Iterator[SQLiteTx]:
        with self._lock:
            self._db.execute(begin)
            try:
                yield SQLiteTx(self._db)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _write(self) -> Any:
        return self._transaction("BEGIN IMMEDIATE")

    def _read(self) -> Any:
        return self._transaction("BEGIN")

    def _integrity_error(self) -> type[Exception]:
        return sqlite3.IntegrityError

    def close(self) -> None:
        with self._lock:
            self._db.close()
