"""A guard against request loops: the same newest call, with the same result, again and again.

An agent that never sees the result of its last call makes that call again; if weaving were what
hid it, every request would be one more turn of the loop, each answered 200. The budget check in
weave.py refuses such a budget with a 400, so this guard is the second line: after `LIMIT` requests
in a row whose newest step is the same call with the same output, the session's requests go out
unwoven (marked, and counted in /health) until its newest step changes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

LIMIT = 4
"""Requests in a row with one newest step before weaving stops: a retry or two is normal, four is a loop."""
SESSIONS = 4096
"""Sessions remembered (least recently seen forgotten first)."""


class LoopGuard:
    def __init__(self) -> None:
        self._seen: OrderedDict[str, tuple[str, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.stopped = 0
        """Requests sent unwoven because their session was looping."""

    def looping(self, session_id: str, newest: str | None) -> bool:
        """Record the session's newest step (None: the request added none); True once it is a loop."""
        with self._lock:
            last, count = self._seen.pop(session_id, (None, 0))
            if newest is not None:
                count = count + 1 if newest == last else 1
                last = newest
            self._seen[session_id] = (last or "", count)
            while len(self._seen) > SESSIONS:
                self._seen.popitem(last=False)
            if count >= LIMIT:
                self.stopped += 1
                return True
            return False
