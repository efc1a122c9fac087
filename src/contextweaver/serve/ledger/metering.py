"""What each forwarded request of a session cost, measured, and what passing it through would have cost.

When a woven request goes upstream, `Metering.request` counts its tokens, stores its row marked missing
("no answer recorded") and returns the callback its answer calls once, however it ends (forward.py):
the provider's usage is read (usage.py), priced and written over the row, off the event loop (rows are
committed many to a transaction: row_writer.py); a store failure is logged and counted, never the caller's. So every request forwarded is one row, with the usage
the upstream reported or the reason there is none (issue 53: a proxy killed after 20 answers kept 11
rows; a stream broken off or a caller hanging up before the stream's end left none). A request forwarded
outside any session (`Passed`: passed through as sent, or before its conversation had a step) is a row the
same way, under its owner (store/requests.py: `cw_passed`), so /metrics equals the rows.

Cost is in base-price input tokens: usage input + cache reads x the read multiplier + cache writes x
the write multiplier (prompt_cache.PRICES; Anthropic's for the Messages wire, OpenAI's otherwise).
The pass-through cost of a request is its measured cost x (simulated cost of the history as the agent
sent it / simulated cost of the request as forwarded), both simulated by the session's prefix caches
(cache_ledger.py) with the tool definitions as a cached prefix after the first request: the provider's
own counts anchor it, the simulation says only how much the forwarded request differs from the whole.
Spend, in money, is the same usage priced by the model's price (spend.py), by model and owner (labels.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import anyio.to_thread

from contextweaver.records import WovenContext, content_text
from contextweaver.serve.ledger.cache_ledger import CacheLedger, prices_of
from contextweaver.serve.ledger.labels import Named
from contextweaver.serve.ledger.metrics import ProxyMetrics
from contextweaver.serve.ledger.row_writer import RowWriter
from contextweaver.serve.sessions.simulation import Simulated
from contextweaver.serve.upstream.usage import Answered, BadUsage, Usage
from contextweaver.store.base import Store
from contextweaver.store.requests import RowWrite

log = logging.getLogger("contextweaver.serve")
NOTE_MARK = "[ContextWeaver"
"""How the working-state note a cut carries begins (weaving/working_state.py)."""
MAX_DROPPED = 2000
"""Decisions kept per cut record (what a cut left out, and why)."""
KNOWN_MISS_REASONS = frozenset({"model_changed", "system_changed", "tools_changed", "messages_changed",
                                "input_changed"})  # fmt: skip
"""Cache-miss reasons the providers document (Anthropic's `cache_miss_reason.type`, Responses' `reason`)."""
MORE_MISS_REASONS = 16
"""Other reasons given a /metrics label of their own, first come; later ones count as `other` (issue 53:
3,000 distinct reasons from an upstream made 931 KB of /metrics). The row keeps the reason itself."""
NO_ANSWER = "no answer recorded: the request was in flight, or the proxy stopped before its answer came"
NO_STEP_YET = "no-step-yet"
"""Why a request woven under no session header is outside any session: its conversation has no step yet
(its session starts with the request holding the first one, serve/sessions/routing.py)."""


@dataclass(frozen=True)
class Forwarded:
    """A woven request as it went upstream: what its answer's record needs besides the usage."""

    session_id: str
    wire: str
    streamed: bool
    steps: int
    added: int
    latency: float
    simulated: Simulated
    context: WovenContext | None
    fallback: str | None = None
    named: Named = Named("openai", "none", "none")


@dataclass(frozen=True)
class Passed:
    """A request forwarded outside any session: why (`reason`: a passthrough or fallback mark, or
    NO_STEP_YET) and whose (`owner`, the caller's keyed hash) its row is."""

    wire: str
    reason: str
    owner: str | None
    streamed: bool
    latency: float
    named: Named = Named("openai", "none", "none")


class Metering:
    def __init__(self, store: Store, ledger: CacheLedger, metrics: ProxyMetrics) -> None:
        self.store = store
        self.ledger = ledger
        self.metrics = metrics
        self.write_failures = 0
        self._miss_labels: set[str] = set(KNOWN_MISS_REASONS)
        self._writes: set[asyncio.Future[int | None]] = set()
        self.writer = RowWriter(store, self._failed)

    async def request(self, sent: Forwarded) -> Callable[[Answered], None]:
        """Count a request going upstream and store its row (missing until the answer comes); the answer's
        callback, which takes the first answer only."""
        m, wire, sim = self.metrics, sent.wire, sent.simulated
        m.seen(sent.session_id)
        m.history.labels(wire).inc(sim.full.tokens)
        m.sent.labels(wire).inc(sim.sent.tokens)
        m.shed.labels(wire).inc(max(0, sim.full.tokens - sim.sent.tokens))
        m.tools.labels(wire).inc(sim.tools)
        m.cached.labels(wire).inc(sim.sent.cached[prices_of(wire).provider])
        if sent.context is not None and sent.context.compacted:
            m.cuts.labels(wire).inc()
        return await self._opened(RowWrite(self._row(sent), sent.session_id), sent.wire, sent.named)

    async def passed(self, sent: Passed) -> Callable[[Answered], None]:
        """Store the row of a request going upstream outside any session (missing until the answer comes)
        under its owner; the answer's callback, which takes the first answer only. Its pass-through cost is
        its billed cost: nothing of it was woven."""
        row = {"at": time.time(), "wire": sent.wire, "status": 0, "streamed": int(sent.streamed),
               "latency_ms": round(sent.latency * 1000, 3), "usage": "missing", "usage_note": NO_ANSWER,
               "reason": sent.reason}  # fmt: skip
        return await self._opened(RowWrite(row, owner=sent.owner), sent.wire, sent.named)

    async def _opened(self, pending: RowWrite, wire: str, named: Named) -> Callable[[Answered], None]:
        """The row committed before the request goes upstream, and the callback that completes it once."""
        request_id = await asyncio.wrap_future(self.writer.submit(pending))
        told: list[Answered] = []

        def answered(answer: Answered) -> None:
            if not told:
                told.append(answer)
                self._answered(pending, wire, named, answer, request_id)

        return answered

    def _answered(
        self, pending: RowWrite, wire: str, named: Named, answered: Answered, request_id: int | None
    ) -> None:
        """The row completed by the answer, written without waiting (over the pending one, or anew when that
        one failed)."""
        row = {**pending.row, "status": answered.status, "usage": "missing", "usage_note": answered.note}
        usage = self.usage(wire, answered, row, named)
        if usage is not None and pending.session_id is not None:
            self.ledger.reported(pending.session_id, usage)
        future = asyncio.wrap_future(self.writer.submit(replace(pending, row=row, request_id=request_id)))
        self._writes.add(future)
        future.add_done_callback(self._writes.discard)

    def usage(
        self, wire: str, answered: Answered, row: dict[str, Any], named: Named = Forwarded.named
    ) -> Usage | None:
        """Read, count and (into `row`) price the answer's usage; a 2xx answer without one is counted. The
        row's note says why there is none, or what was clamped."""
        if not 200 <= answered.status < 300:
            _note(row, None if answered.note else f"the upstream answered {answered.status}")
            return None
        try:
            usage = answered.usage(wire)
        except BadUsage as exc:
            log.warning("an answer's usage is unreadable (%s); not counted", exc)
            self.metrics.usage.labels(wire, "malformed").inc()
            row["usage"] = "malformed"
            _note(row, f"unreadable usage: {exc}")
            return None
        self.metrics.usage.labels(wire, "reported" if usage is not None else "missing").inc()
        if usage is None:
            _note(row, None if answered.note else "the answer reported no usage")
            return None
        _note(row, usage.note)
        prices, m = prices_of(wire), self.metrics
        billed = usage.input + usage.cache_read * prices.read + usage.cache_write * prices.write
        simulated = row.get("sim_sent")  # none outside sessions: passed through, the ratio is 1
        passthrough = billed * row["sim_full"] / simulated if simulated else billed
        row.update(usage="reported", input_tokens=usage.input, cache_read_tokens=usage.cache_read,
                   cache_write_tokens=usage.cache_write, output_tokens=usage.output, billed=billed,
                   passthrough=passthrough, miss_reason=usage.miss_reason)  # fmt: skip
        for kind, value in (("input", usage.input), ("cache_read", usage.cache_read),
                            ("cache_write", usage.cache_write), ("output", usage.output)):  # fmt: skip
            m.provider.labels(wire, kind).inc(value)
        m.billed.labels(wire).inc(billed)
        m.passthrough.labels(wire).inc(passthrough)
        self._spend(usage, named, passthrough / billed if billed else 1.0)
        if usage.miss_reason:
            m.misses.labels(wire, self._miss_label(usage.miss_reason)).inc()
        return usage

    def _spend(self, usage: Usage, named: Named, whole: float) -> None:
        """Count the usage by model and owner, and its spend; `whole`: pass-through cost / billed cost."""
        m, by = self.metrics, (named.provider, named.model, named.owner)
        for kind, value in (("input", usage.input), ("cache_read", usage.cache_read),
                            ("cache_write", usage.cache_write), ("output", usage.output)):  # fmt: skip
            m.model_tokens.labels(*by, kind).inc(value)
        price = m.prices.price(named.model_name)
        if price is None:
            m.unpriced.labels(named.provider, named.model).inc()
            return
        spent_in, spent_out = price.of(usage)
        m.spend.labels(*by, m.prices.currency).inc(spent_in + spent_out)
        m.passthrough_spend.labels(*by, m.prices.currency).inc(spent_in * whole + spent_out)

    def _miss_label(self, reason: str) -> str:
        """The reason's /metrics label: itself when known or among the first few others, else `other`."""
        if (
            reason not in self._miss_labels
            and len(self._miss_labels) < len(KNOWN_MISS_REASONS) + MORE_MISS_REASONS
        ):
            self._miss_labels.add(reason)
        return reason if reason in self._miss_labels else "other"

    def _row(self, sent: Forwarded) -> dict[str, Any]:
        """The request's row before its answer came (status 0, usage missing: NO_ANSWER)."""
        prices = prices_of(sent.wire)
        sim_sent, sim_full = sent.simulated.billed(prices)
        context = sent.context
        return {
            "at": time.time(), "wire": sent.wire, "status": 0, "streamed": int(sent.streamed),
            "step": sent.steps, "added": sent.added, "latency_ms": round(sent.latency * 1000, 3),
            "sent_tokens": sent.simulated.sent.tokens, "full_tokens": sent.simulated.full.tokens,
            "tool_tokens": sent.simulated.tools, "cached_tokens": sent.simulated.sent.cached[prices.provider],
            "sim_sent": sim_sent, "sim_full": sim_full, "usage": "missing", "usage_note": NO_ANSWER,
            "fallback": sent.fallback,
            "test_status": context.test_status if context is not None else None,
            "cut": cut_record(context) if context is not None and context.compacted else None,
        }  # fmt: skip

    def _failed(self, write: RowWrite, exc: Exception) -> None:
        """A write the store refused: logged and counted (/metrics, /health), never the caller's."""
        self.write_failures += 1
        log.error("store failure recording %s: %s: %s", write, type(exc).__name__, exc)

    async def drain(self) -> None:
        """Wait for the rows still being written (at shutdown), then end the writer's thread."""
        if self._writes:
            await asyncio.gather(*self._writes, return_exceptions=True)
        await anyio.to_thread.run_sync(self.writer.close)


def _note(row: dict[str, Any], note: str | None) -> None:
    """Add `note` to the row's usage note (after the answer's own: a stream broken off, a caller gone)."""
    if note:
        row["usage_note"] = f"{row['usage_note']}; {note}" if row.get("usage_note") else note


def cut_record(context: WovenContext) -> str:
    """A cut as stored: its working-state note and what it left out or compressed, with the reasons."""
    note = next((text for text in map(lambda m: content_text(m.get("content")), context.messages)
                 if text.startswith(NOTE_MARK)), None)  # fmt: skip
    left = [
        [d.index, d.mode, d.reason, d.tokens] for d in context.decisions if d.mode not in ("full", "trimmed")
    ]
    return json.dumps({"note": note, "left_out": left[:MAX_DROPPED], "left_out_total": len(left),
                       "tokens": context.tokens, "full_history_tokens": context.full_history_tokens},
                      ensure_ascii=False)  # fmt: skip
