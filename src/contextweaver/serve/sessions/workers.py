"""Weaving in worker processes, so one session's large output never stalls the proxy's event loop.

A worker thread is not enough: a test parser's regex or the tokenizer on a megabyte of hostile
output holds the GIL for hundreds of milliseconds in one C call, and every other request (health
checks included) waits for it. Each worker process has its own SessionManager on the same store
(the store is safe for many processes, like replicas). A conversation goes back to the worker that
wove its last request while that worker is idle, where its session and history are warm; when that
worker is busy weaving another session's huge output, the least busy one takes it instead, brings
the session up to date from the store (as a replica would) and gets the whole history (issue 27: a
session pinned by hash waited 16 s behind another's 20 MB output). The proxy's lock on the key keeps
the work on one conversation serialized wherever it runs. The prompt-cache simulation of a woven
request (which tokenizes it) runs there too.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import logging
import multiprocessing
import os
import time
from collections import OrderedDict
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from typing import Any

from contextweaver.config import WeaverConfig
from contextweaver.serve.sessions.histories import Delta, Histories, StaleHistory
from contextweaver.serve.sessions.routing import SessionManager, Woven
from contextweaver.serve.sessions.session_bytes import DEFAULT_BOUND, shares
from contextweaver.serve.sessions.simulation import Simulated, Simulation, full_messages, opening
from contextweaver.serve.wires.conversation import Conversation

log = logging.getLogger("contextweaver.serve")
_manager: SessionManager | None = None
_simulators: OrderedDict[str, Simulation] = OrderedDict()
_histories = Histories()
_dropped: list[str] = []
"""Sessions dropped from the cache since the last collection."""
SIMULATED_SESSIONS = 256
M_MMAP_THRESHOLD = -3
"""glibc's mallopt parameter: the size from which a block gets its own mapping."""
LARGE_BLOCK = 1024 * 1024
PLACES = 4096
"""Conversations whose last worker is remembered (an older one goes to the least busy worker)."""


def _start(
    store_location: str, config: dict[str, Any], budget: int | None, log_level: int, parent: int, bound: int
) -> None:
    """Worker initializer: one SessionManager per process, its caches within `bound` bytes, logging like the
    parent (URLs redacted), ending with the parent even when it is killed."""
    global _manager
    from contextweaver.serve.gate.redact import RedactingFilter, install_log_redaction
    from contextweaver.serve.gate.server import install_repeat_limit
    from contextweaver.serve.sessions.build import build_manager
    from contextweaver.serve.sessions.parent_watch import exit_with_parent

    logging.basicConfig(level=log_level, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    for handler in logging.getLogger().handlers:
        handler.addFilter(RedactingFilter())
    install_log_redaction()
    install_repeat_limit()
    exit_with_parent(parent)
    _map_large_blocks()
    sessions, _histories.max_bytes = shares(bound)
    _manager = build_manager(store_location, WeaverConfig.model_validate(config), budget=budget,
                             cache_bytes=sessions)  # fmt: skip
    _manager.on_evict = _forget_simulation


def _map_large_blocks() -> None:
    """glibc: every block of 1 MB or more in its own mapping, returned to the system when freed. By default the
    threshold rises to the largest block freed, so the copies of the next huge root go to the heap, which
    keeps them after they are freed (about two roots' worth of RSS with 25 MB roots)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").mallopt(M_MMAP_THRESHOLD, LARGE_BLOCK)


def _forget_simulation(session_id: str) -> None:
    """A session dropped from the cache takes its simulation along (it holds the session's last history)."""
    _simulators.pop(session_id, None)
    _dropped.append(session_id)


def _weave(delta: Delta, session_id: str | None, owner: str | None) -> tuple[Woven, Simulated | None]:
    """`_woven`, then the sessions it dropped freed now: a session's graph holds reference cycles, which
    only a full collection frees, and that may not run for many sessions (weaving_memory.py: RSS rose
    27 MB with each further 25 MB root while the cache stayed within its bound)."""
    try:
        return _woven(delta, session_id, owner)
    finally:
        if _dropped:
            _dropped.clear()
            gc.collect()


def _woven(delta: Delta, session_id: str | None, owner: str | None) -> tuple[Woven, Simulated | None]:
    """The woven request and, when it goes out woven, its prompt-cache use (tokenizing it here too).

    Only what the proxy lacks comes back: no messages when it passes through, no decisions but a cut's."""
    assert _manager is not None, "the worker's initializer builds its manager"
    conversation = delta.conversation(_histories.apply(delta))
    woven = _manager.weave(conversation, session_id, owner)
    if woven.context is None or woven.session_id is None:
        return woven, None
    simulation = _simulators.pop(woven.session_id, None) or Simulation()
    if _manager.holds(woven.session_id):  # one too large for the cache is not simulated across requests
        _simulators[woven.session_id] = simulation
    while len(_simulators) > SIMULATED_SESSIONS:
        _simulators.popitem(last=False)
    sent = [*woven.context.messages, *conversation.pending]
    seen = opening(woven.created, session_id is not None, sent, len(conversation.root))
    use = simulation.request(sent, full_messages(conversation), conversation.reserved, seen)
    messages = [] if woven.unchanged else woven.context.messages
    decisions = woven.context.decisions if woven.context.compacted else []
    woven.context = replace(woven.context, messages=messages, decisions=decisions)
    return woven, use


def _call_soon(loop: asyncio.AbstractEventLoop, callback: Any, *args: Any) -> None:
    """From a pool's thread: `callback` on the loop, unless the loop is already closed (shutdown)."""
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(callback, *args)


def _ready() -> bool:
    return _manager is not None


class WeavingProcesses:
    """N single-process pools; `weave` runs SessionManager.weave in the conversation's last one while it
    is idle, else in the least busy one."""

    def __init__(
        self, store_location: str, config: WeaverConfig, *, budget: int | None, processes: int,
        exit_timeout: float = 5.0, memory: int = DEFAULT_BOUND,
    ) -> None:  # fmt: skip
        """`memory`: bytes each weaving process keeps sessions, their simulations and histories in."""
        self.arguments = (
            store_location,
            config.model_dump(mode="json"),
            budget,
            logging.getLogger().level,
            os.getpid(),
            memory,
        )
        self.pools = [self._pool() for _ in range(max(1, processes))]
        self.exit_timeout = exit_timeout
        self.histories = Histories()
        """The last history sent for each conversation, mirrored in its weaving process."""
        self.busy = [0] * len(self.pools)
        """Weaves submitted to each pool and not yet finished there."""
        self.places: OrderedDict[str, int] = OrderedDict()
        """The pool that wove each conversation's last request."""

    def _pool(self) -> ProcessPoolExecutor:
        context = multiprocessing.get_context("spawn")  # no fork of a process that already runs threads
        return ProcessPoolExecutor(1, mp_context=context, initializer=_start, initargs=self.arguments)

    async def start(self) -> None:
        """Start every worker (loading the tokenizer and the store) before the first request needs it."""
        await asyncio.gather(*(asyncio.wrap_future(pool.submit(_ready)) for pool in self.pools))

    async def weave(
        self, key: str, conversation: Conversation, session_id: str | None, owner: str | None, size: int = 0
    ) -> tuple[Woven, Simulated | None]:
        """`size`: the request body's length, what keeping its history for the next request costs."""
        before = self.places.get(key)
        number = self.choose(key)  # another worker than the last holds none of this history: send it whole
        delta = self.histories.delta(key, conversation, size, whole=before not in (None, number))
        try:
            try:
                return await self._submit(number, delta, session_id, owner)
            except StaleHistory:
                delta = self.histories.delta(key, conversation, size, whole=True)
                return await self._submit(number, delta, session_id, owner)
        except BrokenProcessPool:  # the worker died (killed, out of memory): the next request gets a new one
            self.pools[number].shutdown(wait=False, cancel_futures=True)
            self.pools[number] = self._pool()
            raise
        finally:  # the worker kept this history unless it died
            self.histories.keep(delta, conversation.messages or [])

    def choose(self, key: str) -> int:
        """The conversation's last pool while it is idle, else the least busy (the last one on a tie)."""
        last = self.places.pop(key, None)
        if last is None or last >= len(self.pools) or self.busy[last]:
            last = min(range(len(self.pools)), key=lambda n: (self.busy[n], n != last))
        self.places[key] = last
        while len(self.places) > PLACES:
            self.places.popitem(last=False)
        return last

    async def _submit(
        self, number: int, delta: Delta, session_id: str | None, owner: str | None
    ) -> tuple[Woven, Simulated | None]:
        future = self.pools[number].submit(_weave, delta, session_id, owner)
        self.busy[number] += 1  # until the worker is done, even when the caller stops waiting for it
        loop = asyncio.get_running_loop()
        future.add_done_callback(lambda _: _call_soon(loop, self._done, number))
        return await asyncio.wrap_future(future)

    def _done(self, number: int) -> None:
        self.busy[number] -= 1

    def close(self) -> None:
        """Stop the workers; one still weaving after `exit_timeout` seconds is terminated, so a shutdown
        never waits for a huge or stalled weave (its request was already cancelled by the server)."""
        processes = [
            (process, self.busy[number] > 0)
            for number, pool in enumerate(self.pools)
            for process in list(getattr(pool, "_processes", {}).values())
        ]
        for pool in self.pools:
            pool.shutdown(wait=False, cancel_futures=True)
        deadline = time.monotonic() + self.exit_timeout
        for process, _ in processes:
            process.join(max(0.0, deadline - time.monotonic()))
        for process, weaving in processes:
            if process.is_alive():  # one still starting up (a loaded machine) is no fault: said at INFO
                log.log(logging.WARNING if weaving else logging.INFO,
                        "terminating weaving process %s, %s %.0f s after shutdown began", process.pid,
                        "still weaving" if weaving else "not yet exited", self.exit_timeout)  # fmt: skip
                process.terminate()
                process.join(5)
