"""Metric arithmetic on numbers the tests choose, so each expected value is worked out by hand."""

from __future__ import annotations

import math

import pytest

from contextweaver.eval.metrics import (
    common_prefix_tokens,
    jaccard,
    mean_pairwise_jaccard,
    percentile,
    recall,
    std,
)
from contextweaver.prompt_cache import TokenCounts
from contextweaver.tokens import count_message


def test_percentile_interpolates_like_numpy() -> None:
    assert percentile([1, 2, 3, 4, 5], 50) == 3
    assert percentile(range(1, 101), 95) == pytest.approx(95.05)
    assert percentile([7], 95) == 7
    assert math.isnan(percentile([], 95))


def test_recall_pooled_weighs_items_and_mean_weighs_trajectories() -> None:
    pooled, per_trajectory = recall([(9, 10), (0, 2), (0, 0)])
    assert pooled == pytest.approx(9 / 12)
    assert per_trajectory == pytest.approx((0.9 + 0.0) / 2)  # the item-less trajectory is left out


def test_jaccard_and_agreement_across_seeds() -> None:
    assert jaccard([1, 2, 3], [2, 3, 4]) == pytest.approx(2 / 4)
    assert jaccard([], []) == 1.0
    assert mean_pairwise_jaccard([[1, 2], [1, 2], [1, 2]]) == 1.0
    assert mean_pairwise_jaccard([[1, 2], [1, 3], [1, 2]]) == pytest.approx((1 / 3 + 1 + 1 / 3) / 3)


def test_std_is_sample_deviation_and_zero_for_one_run() -> None:
    assert std([0.8, 0.9]) == pytest.approx(math.sqrt(0.005))
    assert std([0.8]) == 0.0


def test_prefix_tokens_stop_at_the_first_changed_message() -> None:
    a = {"role": "system", "content": "rules of the agent"}
    b = {"role": "user", "content": "the task"}
    c = {"role": "assistant", "content": "ls"}
    placeholder = {"role": "user", "content": "Old environment output: (3 lines omitted)"}
    full = {"role": "user", "content": "a\nb\nc"}
    tokens = TokenCounts().of
    shared = common_prefix_tokens([a, b, c, full], [a, b, c, placeholder, c], tokens)
    assert shared == count_message(a) + count_message(b) + count_message(c)
    assert common_prefix_tokens([b], [a, b], tokens) == 0


def test_message_tokens_memo_counts_each_distinct_message_once() -> None:
    seen: list[str] = []

    def counting(message: dict) -> int:
        seen.append(message["content"])
        return len(message["content"])

    tokens = TokenCounts(counting).of
    message = {"role": "user", "content": "same text"}
    assert tokens(message) == tokens(dict(message)) == 9
    assert tokens({"role": "assistant", "content": "same text"}) == 9
    assert seen == ["same text", "same text"]  # role is part of the key, the copy is not recounted
