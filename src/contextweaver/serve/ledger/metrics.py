"""`/metrics`: the proxy's counters in the Prometheus text format, one registry per app.

Everything is counted in the HTTP process, where every request and answer passes, never in the
weaving processes (workers.py), so one scrape sees the whole proxy. Counts the routes already keep
(budget refusals, loop-guard trips, store failures) are read at scrape time, not counted twice.
Token counts are the proxy's own (o200k_base) except `contextweaver_provider_tokens_total` and
`contextweaver_model_tokens_total`, which sum the providers' usage as billed. Labels hold only bounded
values: the wire, the HTTP status, a token kind, the provider's cache-miss reason, and the model and
owner (an 8-digit hash of the caller's key) through labels.py (at most MODELS and OWNERS values each,
the rest "other"). Spend is priced by spend.py's table. docs/proxy/observability.md maps the names to
OpenTelemetry's GenAI conventions.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from contextweaver.serve.ledger.labels import BoundedLabel, Named, provider_of
from contextweaver.serve.ledger.spend import PriceTable

ACTIVE_SECONDS = 300.0
"""A session is active while its last request is younger than this (a prompt cache's lifetime)."""
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
UPSTREAM_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0, 120.0, 300.0)
MODELS = 20
OWNERS = 20
"""Model and owner values with a label of their own (labels.py); every other value is "other"."""


class ProxyMetrics:
    """The counters of one proxy app, in a registry of its own (tests and several apps never collide)."""

    def __init__(self, prices: PriceTable | None = None) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.prices = prices or PriceTable()
        self.model_label = BoundedLabel(MODELS)
        self.owner_label = BoundedLabel(OWNERS)
        r = self.registry
        by = ["provider", "model", "owner"]
        self.model_tokens = Counter("contextweaver_model_tokens", "Tokens the provider reported, by provider, "
                                    "model, owner and kind: input, cache_read, cache_write, output.", [*by, "kind"],
                                    registry=r)  # fmt: skip
        self.spend = Counter("contextweaver_spend", "Estimated spend of the answers, priced by the price table "
                             "(serve --prices), in its currency.", [*by, "currency"], registry=r)  # fmt: skip
        self.passthrough_spend = Counter("contextweaver_passthrough_spend", "Estimated spend of the same "
                                         "requests passed through whole.", [*by, "currency"], registry=r)  # fmt: skip
        self.unpriced = Counter("contextweaver_unpriced_answers", "Answers with usage whose model the price "
                                "table lacks (not in the spend).", ["provider", "model"], registry=r)  # fmt: skip
        self.first_byte = Histogram("contextweaver_upstream_first_byte_seconds", "From sending a request "
                                    "upstream to its answer's first body bytes (a stream's first token; a whole "
                                    "answer's end).", ["provider", "model"], buckets=UPSTREAM_BUCKETS, registry=r)  # fmt: skip
        self.upstream_total = Histogram("contextweaver_upstream_seconds", "From sending a request upstream to "
                                        "its answer's last byte.", ["provider", "model"], buckets=UPSTREAM_BUCKETS,
                                        registry=r)  # fmt: skip
        self.requests = Counter("contextweaver_requests", "Proxied requests, by wire and answered status.",
                                ["wire", "status"], registry=r)  # fmt: skip
        self.latency = Histogram("contextweaver_proxy_seconds", "Time the proxy adds before forwarding "
                                 "(read, weave, store).", ["wire"], buckets=LATENCY_BUCKETS, registry=r)  # fmt: skip
        self.cuts = Counter("contextweaver_cuts", "Requests whose context was cut anew (lazy mode).",
                            ["wire"], registry=r)  # fmt: skip
        self.history = Counter("contextweaver_history_tokens", "Tokens of the histories received "
                               "(messages, as the agent sent them).", ["wire"], registry=r)  # fmt: skip
        self.sent = Counter("contextweaver_sent_tokens", "Tokens of the messages forwarded upstream.",
                            ["wire"], registry=r)  # fmt: skip
        self.shed = Counter("contextweaver_shed_tokens", "History tokens not forwarded (received - sent).",
                            ["wire"], registry=r)  # fmt: skip
        self.tools = Counter("contextweaver_tool_tokens", "Tokens of the tool definitions forwarded.",
                             ["wire"], registry=r)  # fmt: skip
        self.cached = Counter("contextweaver_cached_prefix_tokens", "Forwarded tokens a prefix cache could "
                              "serve (simulated; cached share = this / sent).", ["wire"], registry=r)  # fmt: skip
        self.provider = Counter("contextweaver_provider_tokens", "Tokens the provider reported as billed, "
                                "by kind: input, cache_read, cache_write, output.", ["wire", "kind"], registry=r)  # fmt: skip
        self.billed = Counter("contextweaver_billed_input_tokens", "Measured input cost in base-price "
                              "tokens (cache reads and writes at their multipliers).", ["wire"], registry=r)  # fmt: skip
        self.passthrough = Counter("contextweaver_passthrough_input_tokens", "Estimated input cost of the "
                                   "same requests passed through whole, in base-price tokens.", ["wire"], registry=r)  # fmt: skip
        self.usage = Counter("contextweaver_usage_answers", "Answers by what their usage was: reported, "
                             "missing or malformed.", ["wire", "usage"], registry=r)  # fmt: skip
        self.misses = Counter("contextweaver_cache_misses", "Cache misses the provider explained, by reason.",
                              ["wire", "reason"], registry=r)  # fmt: skip
        self.last_seen: dict[str, float] = {}

    def named(self, wire: str, model: object, owner: str | None) -> Named:
        """The request's labels (call once per request: a value's admission counts its requests)."""
        name = model if isinstance(model, str) else ""
        return Named(
            provider_of(wire), self.model_label(name), self.owner_label(owner[:8] if owner else None), name
        )

    def timed(self, response: Response, named: Named, sent_at: float) -> Response:
        """`response` (the upstream's answer) with its first-byte and total times observed as it goes out."""
        labels = (named.provider, named.model)
        if not isinstance(response, StreamingResponse):
            elapsed = time.perf_counter() - sent_at
            self.first_byte.labels(*labels).observe(elapsed)
            self.upstream_total.labels(*labels).observe(elapsed)
            return response
        body = response.body_iterator

        async def observed() -> AsyncIterator[Any]:
            first = True
            async for chunk in body:
                if first:
                    self.first_byte.labels(*labels).observe(time.perf_counter() - sent_at)
                    first = False
                yield chunk
            self.upstream_total.labels(*labels).observe(time.perf_counter() - sent_at)

        response.body_iterator = observed()
        return response

    def seen(self, session_id: str) -> None:
        self.last_seen[session_id] = time.monotonic()

    def active(self) -> int:
        """Sessions with a request in the last ACTIVE_SECONDS (older ones are forgotten here)."""
        horizon = time.monotonic() - ACTIVE_SECONDS
        for session_id in [s for s, at in self.last_seen.items() if at < horizon]:
            del self.last_seen[session_id]
        return len(self.last_seen)

    def read_at_scrape(self, counts: Callable[[], dict[str, Any]]) -> None:
        """Expose counts kept elsewhere (`counts()`: refused, loops_stopped, store_failures by where)."""
        self.registry.register(_AtScrape(self, counts))

    async def endpoint(self, request: Request) -> Response:
        return Response(generate_latest(self.registry), media_type=CONTENT_TYPE_LATEST)


class _AtScrape:
    def __init__(self, metrics: ProxyMetrics, counts: Callable[[], dict[str, Any]]) -> None:
        self.metrics = metrics
        self.counts = counts

    def collect(self) -> Iterator[Metric]:
        counts = self.counts()
        yield CounterMetricFamily("contextweaver_budget_refusals", "Requests refused: the budget cannot "
                                  "hold their root and newest step.", value=counts["refused"])  # fmt: skip
        yield CounterMetricFamily("contextweaver_loop_guard_trips", "Requests forwarded unwoven because the "
                                  "same newest call kept arriving.", value=counts["loops_stopped"])  # fmt: skip
        failures = CounterMetricFamily("contextweaver_store_failures", "Store failures, while weaving a "
                                       "request or recording its answer.", labels=["during"])  # fmt: skip
        for during, value in counts["store_failures"].items():
            failures.add_metric([during], value)
        yield failures
        yield GaugeMetricFamily("contextweaver_active_sessions", "Sessions with a request in the last "
                                f"{ACTIVE_SECONDS:.0f} s.", value=self.metrics.active())  # fmt: skip
