"""Retries with backoff and the circuit breaker, with an injected clock and sleep (no waiting)."""

from __future__ import annotations

import pytest

from contextweaver.models.errors import CircuitOpen, ModelRequestError, ModelTimeout, ModelUnavailable
from contextweaver.models.resilience import MAX_RETRY_AFTER, CircuitBreaker, call_with_retries


def test_retries_retryable_errors_with_doubling_backoff() -> None:
    errors = [ModelTimeout("slow"), ModelUnavailable("429")]
    waits: list[float] = []

    def attempt() -> str:
        if errors:
            raise errors.pop(0)
        return "ok"

    assert call_with_retries(attempt, max_retries=2, backoff=0.5, sleep=waits.append) == "ok"
    assert waits == [0.5, 1.0]


def test_gives_up_after_max_retries() -> None:
    calls = []

    def attempt() -> str:
        calls.append(1)
        raise ModelUnavailable("500")

    with pytest.raises(ModelUnavailable):
        call_with_retries(attempt, max_retries=2, backoff=0.0, sleep=lambda s: None)
    assert len(calls) == 3


def test_request_errors_are_not_retried() -> None:
    calls = []

    def attempt() -> str:
        calls.append(1)
        raise ModelRequestError("400")

    with pytest.raises(ModelRequestError):
        call_with_retries(attempt, max_retries=5, backoff=0.0, sleep=lambda s: None)
    assert len(calls) == 1


def test_retry_after_is_honoured_but_capped() -> None:
    error = ModelUnavailable("429")
    error.retry_after = 3600.0
    errors = [error]
    waits: list[float] = []

    def attempt() -> str:
        if errors:
            raise errors.pop()
        return "ok"

    call_with_retries(attempt, max_retries=1, backoff=0.1, sleep=waits.append)
    assert waits == [MAX_RETRY_AFTER]


def test_breaker_opens_then_half_opens_after_cooldown() -> None:
    now = [0.0]
    breaker = CircuitBreaker(threshold=2, cooldown=10.0, clock=lambda: now[0])
    breaker.record_failure()
    breaker.before_call()  # one failure: still closed
    breaker.record_failure()
    assert breaker.state == "open"
    with pytest.raises(CircuitOpen):
        breaker.before_call()
    now[0] = 10.5
    assert breaker.state == "half-open"
    breaker.before_call()  # the trial call goes through
    breaker.record_failure()  # and fails: open again at once
    assert breaker.state == "open"
    now[0] = 21.0
    breaker.record_success()
    assert breaker.state == "closed"
