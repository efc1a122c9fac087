"""A store holds every prompt and tool output: created private, and an open one readable by others is
named in a warning."""

from __future__ import annotations

import logging
import os
import stat
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from contextweaver.records import Step
from contextweaver.store import open_store
from contextweaver.store.session import Session


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_a_new_store_and_its_wal_and_shm_are_0600(tmp_path: Path) -> None:
    old = os.umask(0o022)  # the usual umask: a plain open() would give 0644
    try:
        path = tmp_path / "sessions.db"
        store = open_store(str(path))
        session = Session.create(store, "run", [{"role": "user", "content": "task"}])
        session.add_step(Step("look", "ls", "a.py"))
        files = [path, path.with_name("sessions.db-wal"), path.with_name("sessions.db-shm")]
        assert all(f.exists() for f in files)
        assert {f.name: _mode(f) for f in files} == {f.name: 0o600 for f in files}
        store.close()
    finally:
        os.umask(old)


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_opening_a_store_readable_by_others_warns(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "sessions.db"
    open_store(str(path)).close()
    with caplog.at_level(logging.WARNING):
        open_store(str(path)).close()
    assert not caplog.records  # private: nothing to say
    path.chmod(0o644)
    with caplog.at_level(logging.WARNING):
        open_store(str(path)).close()
    assert any(
        "readable by group or others" in r.getMessage() and str(path) in r.getMessage()
        for r in caplog.records
    )
    assert _mode(path) == 0o644  # warned, not changed behind the owner's back


def _sessions_list(path: Path) -> Result:
    from contextweaver.cli import main

    return CliRunner().invoke(main, ["sessions", "list", "--store", str(path)])


def test_sessions_list_on_a_file_that_is_no_store_gives_a_message(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("not sqlite\n" * 100)
    result = _sessions_list(path)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert "cannot open the store" in result.output and "is it a ContextWeaver store?" in result.output


def test_sessions_list_in_a_read_only_directory_gives_a_message(tmp_path: Path) -> None:
    path = tmp_path / "ro" / "sessions.db"
    store = open_store(str(path))
    Session.create(store, "run", [{"role": "user", "content": "task"}])
    store.close()  # the last connection removes -wal and -shm: a reader must create -shm again
    if subprocess.run(["chattr", "+i", str(path.parent)], capture_output=True).returncode != 0:
        pytest.skip("no chattr here: a root test cannot make a directory read-only otherwise")
    try:
        result = _sessions_list(path)
    finally:
        subprocess.run(["chattr", "-i", str(path.parent)], check=True)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert "cannot open the store" in result.output and "directory you can write to" in result.output
