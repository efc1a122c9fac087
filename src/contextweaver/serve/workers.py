"""Weaving in worker processes, so one session's large output never stalls the proxy's event loop.

A worker thread is not enough: a test parser's regex or the tokenizer on a megabyte of hostile
output holds the GIL for hundreds of milliseconds in one C call, and every other request (health
checks included) waits for it. Each worker process has its own SessionManager on the same store
(the store is safe for many processes); a conversation is always sent to the same worker (by its
lock key), so its loaded session stays warm there and work on one session stays serialized. The
prompt-cache simulation of a woven request (which tokenizes it) runs there too.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import multiprocessing
import os
from collections import OrderedDict
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from typing import Any

from contextweaver.config import WeaverConfig
from contextweaver.prompt_cache import CacheUse, PrefixCache
from contextweaver.serve.conversation import Conversation
from contextweaver.serve.histories import Delta, Histories, StaleHistory
from contextweaver.serve.routing import SessionManager, Woven

_manager: SessionManager | None = None
_simulators: OrderedDict[str, PrefixCache] = OrderedDict()
_histories = Histories()
SIMULATED_SESSIONS = 256


def _start(
    store_location: str, config: dict[str, Any], budget: int | None, log_level: int, parent: int
) -> None:
    """Worker initializer: one SessionManager per process, logging like the parent (URLs redacted),
    ending with the parent even when it is killed."""
    global _manager
    from contextweaver.serve.build import build_manager
    from contextweaver.serve.parent_watch import exit_with_parent
    from contextweaver.serve.redact import RedactingFilter, install_log_redaction
    from contextweaver.serve.server import install_repeat_limit

    logging.basicConfig(level=log_level, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    for handler in logging.getLogger().handlers:
        handler.addFilter(RedactingFilter())
    install_log_redaction()
    install_repeat_limit()
    exit_with_parent(parent)
    _manager = build_manager(store_location, WeaverConfig.model_validate(config), budget=budget)


def _weave(delta: Delta, session_id: str | None, owner: str | None) -> tuple[Woven, CacheUse | None]:
    """The woven request and, when it goes out woven, its prompt-cache use (tokenizing it here too).

    Only what the proxy lacks comes back: no decisions, and no messages when it passes through."""
    assert _manager is not None, "the worker's initializer builds its manager"
    conversation = delta.conversation(_histories.apply(delta))
    woven = _manager.weave(conversation, session_id, owner)
    if woven.context is None or woven.session_id is None:
        return woven, None
    simulator = _simulators.setdefault(woven.session_id, PrefixCache())
    _simulators.move_to_end(woven.session_id)
    while len(_simulators) > SIMULATED_SESSIONS:
        _simulators.popitem(last=False)
    use = simulator.request([*woven.context.messages, *conversation.pending])
    messages = [] if woven.unchanged else woven.context.messages
    woven.context = replace(woven.context, messages=messages, decisions=[])
    return woven, use


def _ready() -> bool:
    return _manager is not None


class WeavingProcesses:
    """N single-process pools; `weave` runs SessionManager.weave in the one chosen by the lock key."""

    def __init__(
        self, store_location: str, config: WeaverConfig, *, budget: int | None, processes: int
    ) -> None:
        self.arguments = (
            store_location,
            config.model_dump(mode="json"),
            budget,
            logging.getLogger().level,
            os.getpid(),
        )
        self.pools = [self._pool() for _ in range(max(1, processes))]
        self.histories = Histories()
        """The last history sent for each conversation, mirrored in its weaving process."""

    def _pool(self) -> ProcessPoolExecutor:
        context = multiprocessing.get_context("spawn")  # no fork of a process that already runs threads
        return ProcessPoolExecutor(1, mp_context=context, initializer=_start, initargs=self.arguments)

    async def start(self) -> None:
        """Start every worker (loading the tokenizer and the store) before the first request needs it."""
        await asyncio.gather(*(asyncio.wrap_future(pool.submit(_ready)) for pool in self.pools))

    async def weave(
        self, key: str, conversation: Conversation, session_id: str | None, owner: str | None, size: int = 0
    ) -> tuple[Woven, CacheUse | None]:
        """`size`: the request body's length, what keeping its history for the next request costs."""
        number = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % len(self.pools)
        delta = self.histories.delta(key, conversation, size)
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

    async def _submit(
        self, number: int, delta: Delta, session_id: str | None, owner: str | None
    ) -> tuple[Woven, CacheUse | None]:
        return await asyncio.wrap_future(self.pools[number].submit(_weave, delta, session_id, owner))

    def close(self) -> None:
        for pool in self.pools:
            pool.shutdown(wait=True, cancel_futures=True)
