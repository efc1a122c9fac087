"""PostgreSQL behind the same interface, for agents on many machines sharing one store.

One connection per store object, guarded by a lock (each proxy process opens its own). Appends to
a session lock its row (`SELECT ... FOR UPDATE`), so two writers on two machines can never store
two different steps under one index: the loser gets StepConflict and reloads. Migrations take an
advisory lock so that proxies starting together migrate once.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from contextweaver.store.sql import SQLStore, Tx

MIGRATION_LOCK = 0x636F6E74  # any constant shared by every contextweaver process


class PostgresTx:
    def __init__(self, connection: Any) -> None:
        self._connection = connection

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        cursor = self._connection.execute(sql.replace("?", "%s"), tuple(params))
        return list(cursor.fetchall()) if cursor.description is not None else []


class PostgresStore(SQLStore):
    float_type = "DOUBLE PRECISION"
    lock_session = " FOR UPDATE"

    def __init__(self, dsn: str, *, connect_timeout: float = 10.0) -> None:
        try:
            import psycopg
            from psycopg.rows import dict_row
        except ImportError as exc:
            raise RuntimeError(
                "the PostgreSQL store needs psycopg: pip install 'contextweaver[postgres]'"
            ) from exc
        super().__init__(_redact(dsn))
        self._psycopg = psycopg
        self._connection = psycopg.connect(
            dsn, autocommit=True, row_factory=dict_row, connect_timeout=int(connect_timeout)
        )
        self.migrate()

    @contextmanager
    def _transaction(self) -> Iterator[PostgresTx]:
        with self._lock, self._connection.transaction():
            yield PostgresTx(self._connection)

    def _write(self) -> Any:
        return self._transaction()

    def _read(self) -> Any:
        return self._transaction()

    def _integrity_error(self) -> type[Exception]:
        error: type[Exception] = self._psycopg.IntegrityError
        return error

    def _migration_lock(self, tx: Tx) -> None:
        tx.execute("SELECT pg_advisory_xact_lock(?)", (MIGRATION_LOCK,))

    def close(self) -> None:
        with self._lock:
            self._connection.close()


def _redact(dsn: str) -> str:
    """The DSN without its password, for messages and listings."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(dsn)
    if parts.password is None:
        return dsn
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))
