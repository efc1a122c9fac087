"""The prefix-cache simulator and the billing arithmetic behind the eval's cost columns."""

from __future__ import annotations

import pytest

from contextweaver.prompt_cache import PRICES, PrefixCache, TokenCounts, run_cost
from contextweaver.tokens import count_message
from tests.conftest import reference_cache

BIG = [
    {"role": "system", "content": "rules " * 700},
    {"role": "user", "content": "task " * 500},
]


def turn(i: int) -> list[dict[str, str]]:
    return [
        {"role": "assistant", "content": f"step {i}: cat file_{i}.py"},
        {"role": "user", "content": f"line {i} " * 60},
    ]


def tokens(messages: list[dict[str, str]]) -> int:
    return sum(count_message(m) for m in messages)


def test_an_appended_request_reads_the_earlier_one_from_the_cache() -> None:
    cache = PrefixCache()
    first = cache.request(BIG)
    assert first.cached == {"anthropic": 0, "openai": 0} and first.tokens == tokens(BIG) > 1024
    assert first.billed["anthropic"] == pytest.approx(1.25 * first.tokens)  # written to the cache
    assert first.billed["openai"] == first.tokens  # no write premium
    second = cache.request([*BIG, *turn(1)])
    assert second.shared == first.tokens == second.cached["anthropic"]
    assert second.cached["openai"] == 1024 + (first.tokens - 1024) // 128 * 128
    rest = second.tokens - first.tokens
    assert second.billed["anthropic"] == pytest.approx(0.1 * first.tokens + 1.25 * rest)


def test_a_change_ends_the_shared_prefix_and_any_earlier_request_counts() -> None:
    cache = PrefixCache()
    cache.request([*BIG, *turn(1), *turn(2)])
    edited = [*BIG, {"role": "assistant", "content": "edited"}, *turn(2)]
    assert cache.request(edited).shared == tokens(BIG)
    assert cache.request([*BIG, *turn(1), *turn(2), *turn(3)]).shared == tokens([*BIG, *turn(1), *turn(2)])


def test_prefixes_below_the_minimum_are_not_cached() -> None:
    cache = PrefixCache()
    short = [{"role": "user", "content": "hello there"}]
    cache.request(short)
    again = cache.request(short)
    assert again.shared == again.tokens and again.cached["anthropic"] == 0
    assert again.billed["anthropic"] == again.tokens  # too short to be cached: plain price


def test_a_growing_history_costs_a_fraction_of_its_uncached_price() -> None:
    requests = [[*BIG, *(m for i in range(1, k + 1) for m in turn(i))] for k in range(1, 30)]
    cost = run_cost([(r, tokens(r)) for r in requests])
    assert cost.cache_share > 0.9
    assert 0.1 < cost.billed["anthropic"] < 0.25 and cost.billed["openai"] < cost.billed["anthropic"]
    rebuilt = run_cost([([*r[:2], *reversed(r[2:])], tokens(r)) for r in requests])  # a prefix that moves
    assert rebuilt.billed["anthropic"] > 3 * cost.billed["anthropic"]


def test_prices_say_when_and_where_they_were_taken() -> None:
    assert PRICES["anthropic"].read == PRICES["openai"].read == 0.1
    assert PRICES["anthropic"].write == 1.25 and PRICES["openai"].write == 1.0
    assert all(p.source.startswith("https://") for p in PRICES.values())


def test_reusing_the_previous_request_gives_what_a_full_pass_gives() -> None:
    """Appends, an edit in the middle, a shorter request, a repeat: the incremental path (equal leading
    messages reuse the last request's prefix hashes) answers exactly as hashing every message does."""
    history = [m for i in range(1, 8) for m in turn(i)]
    edited = [*history[:5], {"role": "assistant", "content": "edited"}, *history[6:]]
    sequence = [[*BIG, *history[:k]] for k in range(0, 14, 2)]
    sequence += [[*BIG, *edited], [*BIG, *history[:3]], [*BIG, *history], [*BIG, *history, *turn(9)]]
    incremental = PrefixCache()
    for messages, (total, shared) in zip(sequence, reference_cache(sequence), strict=True):
        use = incremental.request([dict(m) for m in messages])
        assert (use.tokens, use.shared) == (total, shared)
        assert use.billed == {p: PRICES[p].billed(total, PRICES[p].cached(shared)) for p in PRICES}


def test_token_counts_keep_the_recent_messages_only() -> None:
    counted: list[str] = []

    def count(message: dict) -> int:
        counted.append(message["content"])
        return len(message["content"])

    counts = TokenCounts(count, size=3)
    messages = [{"role": "user", "content": "x" * n} for n in range(1, 6)]
    assert [counts.of(m) for m in messages[:3]] == [1, 2, 3]
    assert counts.of(dict(messages[0])) == 1 and len(counted) == 3  # an equal message is not counted again
    counts.of(messages[3])  # the least recently used (the 2-char one) makes room
    assert len(counts) == 3
    counts.of(messages[0])
    counts.of(messages[1])
    assert counted == ["x", "xx", "xxx", "xxxx", "xx"]
