"""A SIGKILLed `contextweaver serve` leaves no weaving process behind."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from tests.serve.processes import serve_process, upstream_process

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads processes from /proc")


def children(pid: int) -> set[int]:
    """Live (not zombie) processes whose parent is `pid`."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            state, ppid = stat.rsplit(")", 1)[1].split()[:2]
            if int(ppid) == pid and state != "Z":
                found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.slow
def test_weaving_processes_exit_when_the_proxy_is_killed(tmp_path: Path) -> None:
    with (
        upstream_process(tmp_path) as (port, _),
        serve_process(tmp_path, f"http://127.0.0.1:{port}/v1", "--weaving-processes", "2") as proxy,
    ):
        workers = {pid for pid in children(proxy.process.pid)
                   if b"multiprocessing" in Path(f"/proc/{pid}/cmdline").read_bytes()}  # fmt: skip
        assert len(workers) >= 2, f"expected the weaving processes as children: {workers}"
        os.kill(proxy.process.pid, signal.SIGKILL)
        proxy.process.wait(10)
        deadline = time.monotonic() + 5
        while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = {pid for pid in workers if alive(pid)}
        for pid in left:  # never leave them behind, even when the test fails
            os.kill(pid, signal.SIGKILL)
        assert not left, f"weaving processes outlived the killed proxy: {left} ({sys.platform})"
