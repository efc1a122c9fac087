"""Bounded retries with exponential backoff and a circuit breaker, so a sick endpoint costs little time."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

from contextweaver.models.errors import CircuitOpen, ModelError

T = TypeVar("T")
MAX_RETRY_AFTER = 30.0
"""Never wait longer than this for one retry, whatever the server asks."""


class CircuitBreaker:
    """Opens after `threshold` consecutive failed calls; after `cooldown` seconds lets one trial through.

    Why: when the memory model is down, every step would otherwise wait out all its retries.
    """

    def __init__(
        self, threshold: int = 5, cooldown: float = 30.0, clock: Callable[[], float] = time.monotonic
    ):
        self.threshold = threshold
        self.cooldown = cooldown
        self._clock = clock
        self._failures = 0
        self._opened_at: float | None = None
        self._lock = threading.Lock()

    @property
    def state(self) -> str:
        with self._lock:
            if self._opened_at is None:
                return "closed"
            return "half-open" if self._clock() - self._opened_at >= self.cooldown else "open"

    def before_call(self) -> None:
        if self.state == "open":
            raise CircuitOpen(
                f"memory model circuit is open after {self._failures} consecutive failures; "
                f"retrying after {self.cooldown:.0f}s"
            )

    def record_success(self) -> None:
        with self._lock:
            self._failures = 0
            self._opened_at = None

    def record_failure(self) -> None:
        with self._lock:
            self._failures += 1
            if self._failures >= self.threshold or self._opened_at is not None:
                self._opened_at = self._clock()  # a failed half-open trial reopens at once


def call_with_retries(
    attempt: Callable[[], T],
    *,
    max_retries: int,
    backoff: float,
    on_retry: Callable[[ModelError], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Run `attempt`; retry retryable `ModelError`s up to `max_retries` times, waiting backoff * 2**n."""
    for n in range(max_retries + 1):
        try:
            return attempt()
        except ModelError as exc:
            if not exc.retryable or n == max_retries:
                raise
            if on_retry is not None:
                on_retry(exc)
            wait = backoff * (2**n)
            if exc.retry_after is not None:
                wait = max(wait, min(exc.retry_after, MAX_RETRY_AFTER))
            sleep(wait)
    raise AssertionError("unreachable")  # pragma: no cover
