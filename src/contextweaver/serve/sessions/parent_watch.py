"""A weaving process ends with the proxy that started it, even when the proxy is killed outright.

A SIGKILLed proxy runs no cleanup, and its worker processes would live on as orphans holding the
store and their memory. On Linux the kernel sends the worker SIGKILL when its parent dies
(PR_SET_PDEATHSIG); everywhere, a daemon thread also checks once a second that the parent is still
the one that started it (an orphan is adopted by another process) and exits when it is not.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import sys
import threading

PR_SET_PDEATHSIG = 1
CHECK_SECONDS = 1.0
log = logging.getLogger("contextweaver.serve")


def exit_with_parent(parent: int) -> None:
    """Make this process end when process `parent` (the one that started it) ends."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError) as exc:  # no libc symbol: the watchdog alone
            log.debug("PR_SET_PDEATHSIG unavailable: %s", exc)
    if os.getppid() != parent:  # the parent died before the kernel was told
        os._exit(1)
    threading.Thread(target=_watch, args=(parent,), name="parent-watch", daemon=True).start()


def _watch(parent: int) -> None:
    stop = threading.Event()
    while not stop.wait(CHECK_SECONDS):
        if os.getppid() != parent:
            os._exit(1)
