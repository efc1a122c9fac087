"""`contextweaver sessions show ... | head -1`: a reader that closes the pipe early ends the command quietly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from contextweaver.formats import Trajectory
from tests.store.test_cli_sessions import make_store

SIGPIPE_EXIT = 141
"""128 + SIGPIPE: what a shell reports for a command the closed pipe stopped."""


@pytest.mark.parametrize("command", [["show", "bugfix"], ["export", "bugfix"], ["list", "--json"], ["list"]])
def test_a_closed_stdout_is_a_quiet_exit(tmp_path: Path, bugfix: Trajectory, command: list[str]) -> None:
    store = make_store(tmp_path, bugfix)
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line: every write meets a closed pipe
    try:
        done = subprocess.run(
            [sys.executable, "-m", "contextweaver", "sessions", *command, "--store", str(store)],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write)
    assert done.stderr == "" and done.returncode == SIGPIPE_EXIT
