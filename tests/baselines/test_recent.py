from __future__ import annotations

from contextweaver.baselines import BASELINES
from contextweaver.records import PLACEHOLDER
from tests.core.helpers import ROOT, step


def replayed(name: str, n: int):  # noqa: ANN201
    strategy = BASELINES.get(name)()
    strategy.begin(ROOT)
    for i in range(1, n + 1):
        strategy.add_step(step(i))
    return strategy.context()


def test_sliding_window_keeps_the_last_five_observations() -> None:
    context = replayed("sliding_window", 12)
    assert context.kept == [8, 9, 10, 11, 12]
    assert context.text().count(PLACEHOLDER.format(lines=3)) == 7
    assert context.messages[:2] == ROOT  # the task is never elided


def test_masking_keeps_the_last_ten() -> None:
    context = replayed("masking", 12)
    assert context.kept == list(range(3, 13))


def test_full_history_keeps_everything_and_counts_it() -> None:
    context = replayed("full", 12)
    assert context.kept == list(range(1, 13)) and context.tokens == context.full_history_tokens


def test_all_strategies_share_thought_and_action_of_every_step() -> None:
    for name in ("full", "sliding_window", "masking"):
        text = replayed(name, 12).text()
        assert all(f"cat src/part_{i}.py" in text for i in range(1, 13)), name


def test_unknown_strategy_lists_the_valid_ones() -> None:
    import pytest

    with pytest.raises(ValueError, match="valid: .*sliding_window"):
        BASELINES.get("slidingwindow")
