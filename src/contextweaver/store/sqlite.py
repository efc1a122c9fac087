"""The default store: one SQLite file in WAL mode, shared safely by threads and processes.

Every write is a `BEGIN IMMEDIATE` transaction committed with `synchronous=FULL`, so a step is on
disk before `append_step` returns and a process killed at any instant (SIGKILL, power loss after
the fsync) loses nothing it acknowledged. WAL lets `contextweaver sessions` read while a proxy
writes. The file may also hold the LLM response cache (table `llm_cache`).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from contextweaver.store.base import StoreError
from contextweaver.store.rows import rows_of
from contextweaver.store.sql import SQLStore

_log = logging.getLogger(__name__)
_SIDE_FILES = ("-wal", "-shm", "-journal")


def private_file(path: Path) -> bool:
    """Create the store file 0600 (it holds every prompt and tool output), or warn when an existing one
    is readable by group or others. Returns whether it was created here. SQLite gives the -wal and -shm
    files it creates later the database file's permissions."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        return True
    except FileExistsError:
        mode = path.stat().st_mode
        if stat.S_ISREG(mode) and mode & 0o077:
            _log.warning(
                "%s is readable by group or others (mode %o); it holds every prompt and tool output: "
                "chmod 600 %s",
                path, stat.S_IMODE(mode), path,
            )  # fmt: skip
        return False


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
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            created = private_file(self.path)
            self._db = sqlite3.connect(
                str(self.path), isolation_level=None, check_same_thread=False, timeout=busy_timeout
            )
            mode = self._db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        except (OSError, sqlite3.Error) as exc:
            hint = (
                "is it a ContextWeaver store?"
                if type(exc) is sqlite3.DatabaseError
                else "SQLite writes the file and its -wal and -shm files beside it, even to read: "
                "use a copy in a directory you can write to"
            )
            raise StoreError(f"cannot open the store {self.path}: {exc}; {hint}") from exc
        if str(mode).lower() != "wal":
            raise RuntimeError(
                f"{self.path}: SQLite refused WAL mode ({mode}); is it on a network filesystem?"
            )
        self._db.execute(f"PRAGMA synchronous={synchronous.upper()}")
        self._db.execute("PRAGMA foreign_keys=ON")
        self.migrate()
        for suffix in _SIDE_FILES if created else ():  # SQLite already did; a VFS that does not is covered
            side = self.path.with_name(self.path.name + suffix)
            if side.exists():
                side.chmod(0o600)

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
