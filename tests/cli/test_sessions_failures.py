"""`contextweaver sessions` on a damaged store or an --out it cannot write: one line naming the file and what
to do, exit code 1, no traceback (issue 44)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from contextweaver.cli import main
from contextweaver.store import open_store

PAGE = 4096


def store_with(path: Path, sessions: int = 1) -> str:
    store = open_store(str(path))
    for n in range(sessions):
        store.create_session(f"s{n}", [{"role": "user", "content": "x" * 2000}], {})
    store.close()
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return str(path)


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["sessions", *args])


def one_clear_line(result: Result, *words: str) -> None:
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert all(word in lines[0] for word in words), lines[0]


def test_a_damaged_page_is_one_line_that_says_how_to_recover(tmp_path: Path) -> None:
    location = store_with(tmp_path / "s.db", sessions=300)
    pages = os.path.getsize(location) // PAGE
    with open(location, "r+b") as handle:  # the last pages hold session rows; the schema stays readable
        for page in range(pages - 60, pages):
            handle.seek(page * PAGE)
            handle.write(b"\x0d\xff\xff\xff" * 8)
    one_clear_line(run("list", "--store", location), location, "malformed", ".recover")
    one_clear_line(run("export", "s299", "--store", location), location, "malformed")


def test_export_into_a_missing_directory_names_the_file(tmp_path: Path) -> None:
    out = tmp_path / "missing" / "s0.jsonl"
    one_clear_line(run("export", "s0", "--store", store_with(tmp_path / "s.db"), "--out", str(out)),
                   str(out), "create its directory")  # fmt: skip


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full to stand for a full disk")
def test_export_onto_a_full_disk_says_so(tmp_path: Path) -> None:
    one_clear_line(run("export", "s0", "--store", store_with(tmp_path / "s.db"), "--out", "/dev/full"),
                   "/dev/full", "disk is full")  # fmt: skip
