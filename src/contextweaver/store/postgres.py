"""PostgreSQL behind the same interface, for proxies on many machines sharing one store.

Connections come from a pool (psycopg_pool), so the threads of one process work in parallel.
`hold(key)` takes a session-level advisory lock on the key and pins its connection to the thread
until released: the replicas of a proxy serialize their work on one conversation, and a replica
that dies releases its locks with its connection. Correctness does not rest on the lock alone:
appends lock the session row (`SELECT ... FOR UPDATE`) and step rows are keyed by (session, index),
so two writers can never store two steps under one index; the loser gets StepConflict and catches
up. Migrations take an advisory lock so that proxies starting together migrate once.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from contextweaver.extras import needs_message
from contextweaver.store.base import StoreError
from contextweaver.store.sql import SQLStore, Tx

MIGRATION_LOCK = 0x636F6E74  # any constant shared by every contextweaver process
POOL_SIZE = 16


class PostgresTx:
    def __init__(self, connection: Any) -> None:
        self._connection = connection

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        cursor = self._connection.execute(sql.replace("?", "%s"), tuple(params))
        return list(cursor.fetchall()) if cursor.description is not None else []


def lock_id(key: str) -> int:
    """A signed 64-bit advisory lock id for a text key (the same in every process)."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "big", signed=True)


class PostgresStore(SQLStore):
    float_type = "DOUBLE PRECISION"
    serial_type = "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
    lock_session = " FOR UPDATE"

    def __init__(self, dsn: str, *, connect_timeout: float = 10.0, pool_size: int = POOL_SIZE) -> None:
        try:
            import psycopg
            from psycopg.rows import dict_row
            from psycopg_pool import ConnectionPool, PoolTimeout
        except ModuleNotFoundError as exc:  # the CLI reads `name` to say the same in one line
            raise ModuleNotFoundError(
                needs_message("the PostgreSQL store", "postgres"), name=exc.name
            ) from exc
        super().__init__(_redact(dsn))
        self._psycopg = psycopg
        self._pool = ConnectionPool(
            dsn,
            kwargs={"autocommit": True, "row_factory": dict_row, "connect_timeout": int(connect_timeout)},
            min_size=1,
            max_size=pool_size,
            open=True,
            name="contextweaver",
        )
        try:
            self._pool.wait(timeout=connect_timeout)
        except PoolTimeout as exc:
            self._pool.close()
            raise StoreError(
                f"cannot connect to PostgreSQL at {self.url} within {connect_timeout:g} s: "
                "is the server running and the DSN right?"
            ) from exc
        self._pinned = threading.local()
        self.migrate()

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        pinned = getattr(self._pinned, "connection", None)
        if pinned is not None:
            yield pinned
            return
        with self._pool.connection() as connection:
            yield connection

    @contextmanager
    def _transaction(self) -> Iterator[PostgresTx]:
        with self._connection() as connection, connection.transaction():
            yield PostgresTx(connection)

    def _write(self) -> Any:
        return self._transaction()

    def _read(self) -> Any:
        return self._transaction()

    def _integrity_error(self) -> type[Exception]:
        error: type[Exception] = self._psycopg.IntegrityError
        return error

    def _migration_lock(self, tx: Tx) -> None:
        tx.execute("SELECT pg_advisory_xact_lock(?)", (MIGRATION_LOCK,))

    @contextmanager
    def hold(self, key: str) -> Iterator[None]:
        """Hold the advisory lock on `key`; this thread's queries use the lock's connection meanwhile."""
        if getattr(self._pinned, "connection", None) is not None:
            raise RuntimeError("hold() is not reentrant: one key per thread at a time")
        with self._pool.connection() as connection:
            connection.execute("SELECT pg_advisory_lock(%s)", (lock_id(key),))
            self._pinned.connection = connection
            try:
                yield
            finally:
                self._pinned.connection = None
                try:
                    connection.execute("SELECT pg_advisory_unlock(%s)", (lock_id(key),))
                except self._psycopg.Error:
                    connection.close()  # the server drops the locks of a closed connection

    def close(self) -> None:
        self._pool.close()


def _redact(dsn: str) -> str:
    """The DSN without its password, for messages and listings."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(dsn)
    if parts.password is None:
        return dsn
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))
