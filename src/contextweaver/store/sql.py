"""The store's queries, written once for both SQLite and PostgreSQL.

A dialect subclass supplies transactions (`_write` holds an exclusive write transaction and commits
on exit; `_read` a consistent snapshot), its integrity error and how it serializes writers of one
session. Every public write returns only after its commit: that is the acknowledgement.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any, Protocol

from contextweaver.records import Message, Step
from contextweaver.store.base import (
    SessionExists,
    SessionInfo,
    SessionNotFound,
    StepConflict,
    StoredAnnotation,
    StoredStep,
    StoreError,
    canonical,
    digest,
    ordered,
    step_row,
)
from contextweaver.store.nodes import StoredNode
from contextweaver.store.requests import (
    PASSED_COLUMNS,
    PASSED_TOTALS,
    REQUEST_COLUMNS,
    SESSION_COLUMNS,
    TOTALS,
    RowWrite,
)
from contextweaver.store.rows import assemble, session_info
from contextweaver.store.schema import MIGRATIONS, SCHEMA_TABLE, Migration, latest_version

STEP_COLUMNS = ("thought", "action", "observation", "messages", "images", "kind", "meta")
NODE_COLUMNS = ("full_tokens", "compressed_tokens", "facts", "tests", "placeholders")


class Tx(Protocol):
    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]: ...


class SQLStore:
    """Sessions, steps, nodes, edges and labels in `cw_*` tables of one database."""

    float_type = "REAL"
    serial_type = "INTEGER PRIMARY KEY"
    lock_session = ""
    """Suffix of the SELECT that reads a session row before appending (PostgreSQL: FOR UPDATE)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._lock = threading.RLock()

    # -- dialect hooks --------------------------------------------------------------------------

    def _write(self) -> AbstractContextManager[Tx]:
        raise NotImplementedError

    def _read(self) -> AbstractContextManager[Tx]:
        raise NotImplementedError

    def _integrity_error(self) -> type[Exception]:
        raise NotImplementedError

    def _migration_lock(self, tx: Tx) -> None:
        """Keep two processes from migrating at once (SQLite's write transaction already does)."""

    def close(self) -> None:
        raise NotImplementedError

    def hold(self, key: str) -> AbstractContextManager[None]:
        """Serialize work on `key` across processes where the database can (PostgreSQL); else a no-op:
        one process serializes its own threads, and row keys make concurrent writers safe anyway."""
        return nullcontext()

    # -- schema ---------------------------------------------------------------------------------

    def migrate(self, migrations: tuple[Migration, ...] = MIGRATIONS) -> list[int]:
        """Apply the missing migrations in one transaction; returns the versions applied."""
        applied: list[int] = []
        with self._write() as tx:
            self._migration_lock(tx)
            tx.execute(SCHEMA_TABLE.format(float=self.float_type))
            done = {int(r["version"]) for r in tx.execute("SELECT version FROM cw_schema")}
            newest = max(done, default=0)
            if newest > latest_version(migrations):
                raise StoreError(
                    f"{self.url}: the store's schema is version {newest}, newer than this contextweaver "
                    f"knows ({latest_version(migrations)}): upgrade contextweaver to open it"
                )
            for migration in sorted(migrations, key=lambda m: m.version):
                if migration.version in done:
                    continue
                for statement in migration.statements:
                    tx.execute(statement.format(float=self.float_type, serial=self.serial_type))
                tx.execute(
                    "INSERT INTO cw_schema (version, name, applied_at) VALUES (?, ?, ?)",
                    (migration.version, migration.name, time.time()),
                )
                applied.append(migration.version)
        return applied

    def schema_version(self) -> int:
        with self._read() as tx:
            rows = tx.execute("SELECT MAX(version) AS v FROM cw_schema")
        return int(rows[0]["v"] or 0)

    # -- sessions -------------------------------------------------------------------------------

    def create_session(
        self,
        session_id: str,
        root: Sequence[Message],
        config: dict[str, Any],
        *,
        conversation_key: str | None = None,
        meta: dict[str, Any] | None = None,
        owner: str | None = None,
        capability: str | None = None,
    ) -> SessionInfo:
        now = time.time()
        row = (
            session_id, conversation_key, ordered(list(root)), digest(root), canonical(config),
            canonical(meta or {}), now, now, owner, capability,
        )  # fmt: skip
        try:
            with self._write() as tx:
                tx.execute(
                    "INSERT INTO cw_sessions (id, conversation_key, root, root_digest, config, meta, "
                    "created_at, updated_at, owner, capability) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    row,
                )
        except self._integrity_error() as exc:
            raise SessionExists(f"session {session_id!r} already exists in {self.url}") from exc
        info = self.session(session_id)
        assert info is not None
        return info

    def session(self, session_id: str) -> SessionInfo | None:
        with self._read() as tx:
            rows = tx.execute(f"SELECT {SESSION_COLUMNS} FROM cw_sessions WHERE id = ?", (session_id,))
        return session_info(rows[0]) if rows else None

    def sessions(self, conversation_key: str | None = None) -> list[SessionInfo]:
        with self._read() as tx:
            if conversation_key is None:
                rows = tx.execute(f"SELECT {SESSION_COLUMNS} FROM cw_sessions ORDER BY created_at, id")
            else:
                rows = tx.execute(
                    f"SELECT {SESSION_COLUMNS} FROM cw_sessions WHERE conversation_key = ? ORDER BY created_at, id",
                    (conversation_key,),
                )
        return [session_info(r) for r in rows]

    def sessions_of(
        self, owner: str | None, offset: int = 0, limit: int | None = None
    ) -> tuple[list[SessionInfo], int]:
        """A page of one owner's sessions (oldest first) and how many it has, read by the owner index."""
        where, params = _owner_is(owner)
        with self._read() as tx:
            total = tx.execute(f"SELECT COUNT(*) AS n FROM cw_sessions WHERE {where}", params)
            rows = tx.execute(
                f"SELECT {SESSION_COLUMNS} FROM cw_sessions WHERE {where} ORDER BY created_at, id LIMIT ? OFFSET ?",
                (*params, limit if limit is not None else 2**62, offset),
            )
        return [session_info(r) for r in rows], int(total[0]["n"])

    def session_with_capability(self, capability: str) -> SessionInfo | None:
        with self._read() as tx:
            rows = tx.execute(
                f"SELECT {SESSION_COLUMNS} FROM cw_sessions WHERE capability = ? LIMIT 1", (capability,)
            )
        return session_info(rows[0]) if rows else None

    def fill_capabilities(self, capability_of: Callable[[str], str], batch: int = 1000) -> int:
        with self._usable("read its sessions"):
            return self._fill_capabilities(capability_of, batch)

    def _fill_capabilities(self, capability_of: Callable[[str], str], batch: int) -> int:
        filled = 0
        while True:
            with self._read() as tx:
                rows = tx.execute("SELECT id FROM cw_sessions WHERE capability IS NULL LIMIT ?", (batch,))
            if not rows:
                return filled
            with self._write() as tx:  # another process filling the same rows writes the same values
                for row in rows:
                    tx.execute(
                        "UPDATE cw_sessions SET capability = ? WHERE id = ?",
                        (capability_of(row["id"]), row["id"]),
                    )
            filled += len(rows)

    def step_count(self, session_id: str) -> int:
        with self._read() as tx:
            rows = tx.execute("SELECT steps FROM cw_sessions WHERE id = ?", (session_id,))
        if not rows:
            raise SessionNotFound(f"no session {session_id!r} in {self.url}")
        return int(rows[0]["steps"])

    # -- steps ----------------------------------------------------------------------------------

    def append_step(self, session_id: str, index: int, step: Step, step_digest: str, fmt: str | None) -> None:
        with self._write() as tx:
            self._insert_step(tx, session_id, index, step, step_digest, fmt)

    def append_node(
        self,
        session_id: str,
        index: int,
        step: Step,
        step_digest: str,
        fmt: str | None,
        annotation: StoredAnnotation,
        computed: StoredNode,
    ) -> None:
        with self._write() as tx:
            self._insert_step(tx, session_id, index, step, step_digest, fmt)
            self._insert_node(tx, session_id, index, annotation, computed)

    def save_annotation(self, session_id: str, index: int, annotation: StoredAnnotation) -> None:
        try:
            with self._write() as tx:
                self._insert_node(tx, session_id, index, annotation, None)
        except self._integrity_error() as exc:
            raise StepConflict(f"step {index} of session {session_id!r} is already annotated") from exc

    def _insert_step(
        self, tx: Tx, session_id: str, index: int, step: Step, step_digest: str, fmt: str | None
    ) -> None:
        """Step `index` after checking, on the locked session row, that it is the next one."""
        row = step_row(step)
        found = tx.execute(f"SELECT steps FROM cw_sessions WHERE id = ?{self.lock_session}", (session_id,))
        if not found:
            raise SessionNotFound(f"no session {session_id!r} in {self.url}")
        stored = int(found[0]["steps"])
        if stored != index - 1:
            raise StepConflict(
                f"session {session_id!r} holds {stored} steps: cannot store step {index} "
                "(another writer appended to it; reload the session)"
            )
        now = time.time()
        tx.execute(
            f"INSERT INTO cw_steps (session_id, idx, digest, {', '.join(STEP_COLUMNS)}, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (session_id, index, step_digest, *(row[c] for c in STEP_COLUMNS), now),
        )
        tx.execute(
            "UPDATE cw_sessions SET steps = ?, updated_at = ?, format = COALESCE(format, ?) WHERE id = ?",
            (index, now, fmt, session_id),
        )

    def _insert_node(
        self, tx: Tx, session_id: str, index: int, annotation: StoredAnnotation, computed: StoredNode | None
    ) -> None:
        """The node row (with what extraction computed, when given), its edges and the labels it gave."""
        extra = computed.columns() if computed is not None else dict.fromkeys(NODE_COLUMNS)
        tx.execute(
            "INSERT INTO cw_nodes (session_id, idx, summary, dependency_summary, validation_status, "
            f"annotated_at, {', '.join(NODE_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (session_id, index, annotation.summary, annotation.dependency_summary,
             annotation.validation_status, time.time(), *(extra[c] for c in NODE_COLUMNS)),
        )  # fmt: skip
        for rank, parent in enumerate(annotation.parents):
            tx.execute(
                "INSERT INTO cw_edges (session_id, child, parent, rank, confidence, reason) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (session_id, index, parent.index, rank, float(parent.confidence), parent.reason),
            )
        for seq, label in enumerate(annotation.labels):
            tx.execute(
                "INSERT INTO cw_labels (session_id, by_idx, seq, idx, status, reason) VALUES (?, ?, ?, ?, ?, ?)",
                (session_id, index, seq, label.index, str(label.status), label.reason),
            )

    # -- lazy cuts -------------------------------------------------------------------------------

    def save_cut(self, session_id: str, step: int, state: dict[str, Any]) -> None:
        # key order kept (not canonical): the frozen prefix must render to the same bytes
        text = json.dumps(state, ensure_ascii=False, allow_nan=False)
        with self._write() as tx:
            tx.execute(
                "INSERT INTO cw_cuts (session_id, step, state, saved_at) VALUES (?, ?, ?, ?) ON CONFLICT "
                "(session_id) DO UPDATE SET step = excluded.step, state = excluded.state, saved_at = excluded.saved_at",
                (session_id, step, text, time.time()),
            )

    def cut(self, session_id: str) -> tuple[int, dict[str, Any]] | None:
        with self._read() as tx:
            rows = tx.execute("SELECT step, state FROM cw_cuts WHERE session_id = ?", (session_id,))
        return (int(rows[0]["step"]), json.loads(rows[0]["state"])) if rows else None

    # -- forwarded requests ----------------------------------------------------------------------

    def record_request(self, session_id: str, row: dict[str, Any]) -> int:
        return self.write_requests([RowWrite(row, session_id)])[0]

    def write_requests(self, writes: Sequence[RowWrite]) -> list[int]:
        with self._write() as tx:
            return [self._write_request(tx, write) for write in writes]

    def _write_request(self, tx: Tx, write: RowWrite) -> int:
        """Insert the row (its id) or set its columns on row `request_id`, in a session's rows or outside them."""
        table, key, value, columns = (
            ("cw_requests", "session_id", write.session_id, REQUEST_COLUMNS)
            if write.session_id is not None
            else ("cw_passed", "owner", write.owner, PASSED_COLUMNS)
        )
        names = [name for name in columns if name in write.row]
        if write.request_id is not None:
            tx.execute(
                f"UPDATE {table} SET {', '.join(f'{name} = ?' for name in names)} WHERE id = ?",
                (*(write.row[name] for name in names), write.request_id),
            )
            return write.request_id
        rows = tx.execute(
            f"INSERT INTO {table} ({key}, {', '.join(names)}) VALUES (?, {', '.join('?' for _ in names)}) "
            "RETURNING id",
            (value, *(write.row[name] for name in names)),
        )
        return int(rows[0]["id"])

    def passed_requests(
        self, owner: str | None, after: int = 0, limit: int | None = None
    ) -> list[dict[str, Any]]:
        where, params = _owner_is(owner)
        with self._read() as tx:
            return tx.execute(
                f"SELECT id, owner, {', '.join(PASSED_COLUMNS)} FROM cw_passed WHERE {where} AND id > ? "
                "ORDER BY id LIMIT ?",
                (*params, after, limit if limit is not None else 2**62),
            )

    def passed_totals(self) -> dict[str | None, dict[str, Any]]:
        with self._read() as tx:
            rows = tx.execute(f"SELECT owner, {PASSED_TOTALS} FROM cw_passed GROUP BY owner")
        return {row.pop("owner"): row for row in rows}

    def owner_passed_totals(self, owner: str | None) -> dict[str, Any]:
        where, params = _owner_is(owner)
        with self._read() as tx:
            return tx.execute(f"SELECT {PASSED_TOTALS} FROM cw_passed WHERE {where}", params)[0]

    def requests(self, session_id: str, after: int = 0, limit: int | None = None) -> list[dict[str, Any]]:
        with self._read() as tx:
            return tx.execute(
                f"SELECT id, {', '.join(REQUEST_COLUMNS)} FROM cw_requests WHERE session_id = ? AND id > ? "
                "ORDER BY id LIMIT ?",
                (session_id, after, limit if limit is not None else 2**62),
            )

    def request_totals(self, session_id: str | None = None) -> dict[str, dict[str, Any]]:
        where, params = ("WHERE session_id = ? ", (session_id,)) if session_id is not None else ("", ())
        return self._totals(f"cw_requests {where}", params)

    def owner_request_totals(self, owner: str | None) -> dict[str, dict[str, Any]]:
        where, params = _owner_is(owner, "s.owner")
        return self._totals(f"cw_requests JOIN cw_sessions s ON s.id = session_id WHERE {where} ", params)

    def _totals(self, source: str, params: Sequence[Any]) -> dict[str, dict[str, Any]]:
        with self._read() as tx:
            rows = tx.execute(f"SELECT session_id, {TOTALS} FROM {source}GROUP BY session_id", params)
        return {str(row.pop("session_id")): row for row in rows}

    def digests(self, session_id: str) -> list[str]:
        with self._read() as tx:
            rows = tx.execute("SELECT digest FROM cw_steps WHERE session_id = ? ORDER BY idx", (session_id,))
        return [str(r["digest"]) for r in rows]

    def steps(self, session_id: str, start: int = 1, limit: int | None = None) -> list[StoredStep]:
        end = start + limit if limit is not None else 2**62
        with self._read() as tx:
            rows = tx.execute(
                "SELECT s.*, n.summary, n.dependency_summary, n.validation_status, n.idx AS node_idx, "
                f"{', '.join(f'n.{c}' for c in NODE_COLUMNS)} "
                "FROM cw_steps s LEFT JOIN cw_nodes n ON n.session_id = s.session_id AND n.idx = s.idx "
                "WHERE s.session_id = ? AND s.idx >= ? AND s.idx < ? ORDER BY s.idx",
                (session_id, start, end),
            )
            edges = tx.execute(
                "SELECT child, parent, confidence, reason FROM cw_edges WHERE session_id = ? AND child >= ? "
                "AND child < ? ORDER BY child, rank",
                (session_id, start, end),
            )
            labels = tx.execute(
                "SELECT by_idx, idx, status, reason FROM cw_labels WHERE session_id = ? AND by_idx >= ? "
                "AND by_idx < ? ORDER BY by_idx, seq",
                (session_id, start, end),
            )
        return assemble(rows, edges, labels)

    def secret(self, name: str) -> str:
        with self._usable("keep its secrets"), self._write() as tx:
            tx.execute(
                "INSERT INTO cw_secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
                (name, secrets.token_hex(32)),
            )
            rows = tx.execute("SELECT value FROM cw_secrets WHERE name = ?", (name,))
        return str(rows[0]["value"])

    @contextmanager
    def _usable(self, doing: str) -> Iterator[None]:
        """A database error while the store is first used (the proxy's start) as a StoreError that says
        what to do: one line, not a traceback (issue 53: a read-only disk, a damaged page)."""
        try:
            yield
        except Exception as exc:
            if not type(exc).__module__.startswith(("sqlite3", "psycopg")):
                raise
            text = str(exc).lower()
            hint = (
                "its disk is read-only: give --store a file on a writable disk"
                if "readonly" in text or "read-only" in text
                else "a page of it is damaged: recover it (`sqlite3 FILE .recover | sqlite3 NEW`) or use a new --store"
                if "malformed" in text or "not a database" in text
                else "check that the database is reachable and writable"
            )
            raise StoreError(
                f"the store {self.url} cannot {doing}: {type(exc).__name__}: {exc}; {hint}"
            ) from exc


def _owner_is(owner: str | None, column: str = "owner") -> tuple[str, tuple[str, ...]]:
    """The condition that a row is `owner`'s (None: created without a credential), by the owner index."""
    return (f"{column} = ?", (owner,)) if owner is not None else (f"{column} IS NULL", ())
