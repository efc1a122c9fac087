"""Ctrl-C during `contextweaver eval -j 2`, sent by a real signal to a real process (group)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.eval.conftest import write_jsonl

from contextweaver.records import Step

RUNS = 36
"""Enough runs (of 100 steps) that the grid outlasts a test process stalled for seconds on a busy machine:
6 runs of 60 steps took 3.2 s in all, and a loaded suite once saw every one finish before the signal; 12
runs took 3.4 s and a fresh clone's suite saw the same."""


def long_run(seed: int) -> list[Step]:
    """Enough steps that one unit takes a noticeable time, so the queue is far from done when stopped."""
    return [
        Step(
            f"Read module {i % 7}.",
            f"cat pkg/m{i % 7}_{seed}.py",
            "\n".join(f"def f{i}_{n}(x): return g_{(i * n) % 97}(x)" for n in range(25)),
        )
        for i in range(100)
    ]


def finished(out: Path) -> list[Path]:
    return sorted((out / "results").rglob("*.json"))


def eval_command(folder: Path, out: Path) -> list[str]:
    command = [sys.executable, "-c", "from contextweaver.cli import main; main()", "eval", str(folder)]
    return command + ["-s", "full,masking", "-b", "none", "-o", str(out), "-j", "2", "--no-progress"]


@pytest.mark.skipif(sys.platform == "win32", reason="process groups and SIGINT are POSIX")
@pytest.mark.parametrize("group", [True, False], ids=["terminal-ctrl-c", "kill-int-parent"])
@pytest.mark.slow
def test_ctrl_c_stops_within_seconds_keeps_finished_runs_and_a_rerun_resumes(
    tmp_path: Path, group: bool
) -> None:
    """A terminal's Ctrl-C reaches the workers too; `kill -INT` only the parent, which must stop them."""
    folder = tmp_path / "runs"
    folder.mkdir()
    for n in range(RUNS):
        write_jsonl(folder / f"proj__proj-{n}.jsonl", long_run(n))
    out = tmp_path / "out"
    process = subprocess.Popen(
        eval_command(folder, out),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not finished(out) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert finished(out), "no run finished"
        (os.killpg if group else os.kill)(process.pid, signal.SIGINT)
        stopped = time.monotonic()
        output, _ = process.communicate(timeout=30)
        took = time.monotonic() - stopped
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == 130, output
    assert "interrupted" in output and "resume" in output
    assert took < 10, f"took {took:.1f}s to stop"
    kept = len(finished(out))
    assert 1 <= kept < 2 * RUNS  # the queue was not run to its end
    if group:
        return  # resuming is the same either way
    rerun = subprocess.run(
        eval_command(folder, out), capture_output=True, text=True, timeout=300, check=False
    )
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert f"{2 * RUNS - kept} run(s) computed, {kept} reused" in rerun.stderr + rerun.stdout
