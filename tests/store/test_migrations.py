"""Schema migrations: applied once, in order, recorded; a newer store is refused with a clear error."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from contextweaver.models.cache import CachedModel
from contextweaver.models.fake import FakeModel
from contextweaver.store import StoreError, open_store
from contextweaver.store.schema import MIGRATIONS, Migration, latest_version
from contextweaver.store.sqlite import SQLiteStore


def test_a_new_store_is_at_the_latest_version(store_location: str) -> None:
    store = open_store(store_location)
    assert store.schema_version() == latest_version()  # type: ignore[attr-defined]
    store.close()
    again = open_store(store_location)  # reopening applies nothing twice
    assert again.migrate() == []  # type: ignore[attr-defined]
    again.close()


def test_a_later_migration_is_applied_to_an_existing_store(store_location: str) -> None:
    store = open_store(store_location)
    store.create_session("old", [{"role": "user", "content": "task"}], {})
    extra = Migration(latest_version() + 1, "add a table", ("CREATE TABLE cw_extra (x INTEGER)",))
    assert store.migrate((*MIGRATIONS, extra)) == [extra.version]  # type: ignore[attr-defined]
    assert store.schema_version() == extra.version  # type: ignore[attr-defined]
    assert [s.id for s in store.sessions()] == ["old"]  # data kept
    with pytest.raises(StoreError, match="newer than this contextweaver"):
        store.migrate()  # type: ignore[attr-defined]
    store.close()


def test_a_failing_migration_leaves_the_store_untouched(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    broken = Migration(latest_version() + 1, "broken", ("CREATE TABLE cw_half (x INTEGER)", "NOT SQL"))
    with pytest.raises(sqlite3.OperationalError):
        store.migrate((*MIGRATIONS, broken))
    assert store.schema_version() == latest_version()
    tables = {r[0] for r in sqlite3.connect(tmp_path / "s.db").execute("SELECT name FROM sqlite_master")}
    assert "cw_half" not in tables
    store.close()


def test_the_llm_cache_shares_the_store_file(tmp_path: Path) -> None:
    path = tmp_path / "one.db"
    store = SQLiteStore(path)
    cached = CachedModel(FakeModel(), path)
    cached.complete([{"role": "user", "content": "Summarize: ls"}])
    store.create_session("s", [{"role": "user", "content": "task"}], {})
    cached.close()
    store.close()
    tables = {
        r[0] for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master WHERE type='table'")
    }
    assert {
        "llm_cache",
        "cw_sessions",
        "cw_steps",
        "cw_nodes",
        "cw_edges",
        "cw_labels",
        "cw_schema",
    } <= tables
    assert [s.id for s in SQLiteStore(path).sessions()] == ["s"]
