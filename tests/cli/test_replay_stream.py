"""`contextweaver replay` prints each row as its step is computed, with a progress bar on stderr when
stderr is a terminal (between the rows, cleared before each) and none in a pipe."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

ENTRY = "import sys; from contextweaver.cli import main; sys.argv[0] = 'contextweaver'; main()"
STEPS = 12


@pytest.fixture
def long_run(tmp_path: Path) -> Path:
    path = tmp_path / "run.jsonl"
    lines = [{"system": "You are a coding agent.", "task": "Fix the helper calls."}]
    lines += [
        {"thought": f"look {i}", "action": f"cat f{i}.py", "observation": f"def f{i}(): pass"}
        for i in range(STEPS)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def replay(args: list[str], **streams: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "COLUMNS": "100", "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen([sys.executable, "-c", ENTRY, "replay", *args], env=env, **streams)  # type: ignore[call-overload]


def read_terminal(args: list[str]) -> str:
    """What a terminal shows when stdout and stderr are both it (a pseudo-terminal)."""
    leader, follower = pty.openpty()
    process = replay(args, stdout=follower, stderr=follower)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert process.wait(timeout=120) == 0
    return b"".join(chunks).decode("utf-8", errors="replace")


def test_rows_come_between_progress_updates_on_a_terminal(long_run):
    shown = read_terminal([str(long_run), "-s", "full,masking"])
    first, second = shown.index("cat f0.py"), shown.index("cat f1.py")
    progress = shown.index(f"step 2 of {STEPS}")
    assert first < progress < second  # row 1 was out before step 2 was computed
    assert shown.index("reading ") < first
    assert f"step {STEPS} of {STEPS}" in shown and shown.index(f"step {STEPS} of {STEPS}") < shown.index(
        f"cat f{STEPS - 1}.py"
    )


def test_wide_buffers_its_table_behind_a_progress_bar(long_run):
    shown = read_terminal([str(long_run), "-s", "full,masking", "--wide"])
    assert shown.index(f"step {STEPS} of {STEPS}") < shown.index("cat f0.py")


def test_no_progress_in_a_pipe(long_run):
    process = replay([str(long_run), "-s", "full,masking"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0
    assert err == b"" and b"\x1b[K" not in out
    assert out.decode().count(".py") >= STEPS
