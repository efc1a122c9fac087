"""Stores to test against: a SQLite file always, PostgreSQL when CONTEXTWEAVER_PG_DSN names a server.

Each PostgreSQL test gets its own schema (dropped afterwards), so tests never see each other's rows.
Start a throwaway server with: eval "$(bash scripts/start_postgres.sh)".
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import pytest

from contextweaver.examples import example_path
from contextweaver.formats import Trajectory, load_trajectory
from contextweaver.store import Store

PG_DSN = os.environ.get("CONTEXTWEAVER_PG_DSN")


def pg_schema_dsn(schema: str) -> str:
    """The DSN with `search_path` set to `schema`, so every table lives in that schema."""
    assert PG_DSN is not None
    separator = "&" if "?" in PG_DSN else "?"
    return f"{PG_DSN}{separator}options={quote(f'-csearch_path={schema}')}"


@contextmanager
def pg_schema() -> Iterator[str]:
    """A DSN whose tables go to a fresh schema, dropped afterwards; skips when no server is configured."""
    if not PG_DSN:
        pytest.skip("CONTEXTWEAVER_PG_DSN is unset: start one with scripts/start_postgres.sh")
    import psycopg

    schema = f"cw_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_DSN, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
    try:
        yield pg_schema_dsn(schema)
    finally:
        with psycopg.connect(PG_DSN, autocommit=True) as admin:
            admin.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture
def pg_dsn() -> Iterator[str]:
    with pg_schema() as dsn:
        yield dsn


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "sessions.db")
    return str(request.getfixturevalue("pg_dsn"))


@pytest.fixture
def store(store_location: str) -> Iterator[Store]:
    from contextweaver.store import open_store

    opened = open_store(store_location)
    yield opened
    opened.close()


@pytest.fixture(scope="session")
def bugfix() -> Trajectory:
    """The shipped example run: real commands and test output, with failures later fixed."""
    return load_trajectory(example_path("bugfix"))
