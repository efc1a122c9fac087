"""Durable sessions: SQLite (one file, the default) or PostgreSQL (one server, many machines).

store = open_store("sessions.db")                       # or "postgresql://user@host/db"
session = Session.create(store, "run-42", [system, task])   # later: Session.open(store, "run-42")
"""

from __future__ import annotations

from pathlib import Path

from contextweaver.store.base import (
    SessionExists,
    SessionInfo,
    SessionNotFound,
    StepConflict,
    Store,
    StoredAnnotation,
    StoredStep,
    StoreError,
    digest,
)
from contextweaver.store.nodes import StoredNode
from contextweaver.store.session import Session

__all__ = [
    "Session",
    "SessionExists",
    "SessionInfo",
    "SessionNotFound",
    "StepConflict",
    "Store",
    "StoreError",
    "StoredAnnotation",
    "StoredNode",
    "StoredStep",
    "digest",
    "open_store",
]


def open_store(location: str | Path) -> Store:
    """A store from a location: a postgresql:// (or postgres://) DSN, otherwise a SQLite file path."""
    text = str(location)
    if text.startswith(("postgresql://", "postgres://")):
        from contextweaver.store.postgres import PostgresStore

        return PostgresStore(text)
    from contextweaver.store.sqlite import SQLiteStore

    return SQLiteStore(text.removeprefix("sqlite:///").removeprefix("sqlite://"))
