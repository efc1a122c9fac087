"""Resident memory of a process, read from /proc (Linux), and its peak sampled over a block of work."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


def rss(pid: int) -> int:
    """Resident bytes of `pid` (0 once it has gone)."""
    try:
        return int((Path(f"/proc/{pid}/statm")).read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return 0


def rss_tree(pid: int) -> int:
    """Resident bytes of `pid` and its children (the proxy's weaving processes)."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if entry.name == str(pid) or int(stat[1]) == pid:
                total += int(stat[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    return total


@contextmanager
def peak(pid: int, measure: Callable[[int], int] = rss) -> Iterator[dict[str, int]]:
    """The peak of `measure(pid)` over the block, sampled every 20 ms, in the dict's "peak"."""
    found = {"peak": measure(pid)}
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            found["peak"] = max(found["peak"], measure(pid))
            time.sleep(0.02)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield found
    finally:
        done.set()
        thread.join()
