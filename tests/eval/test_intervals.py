import pytest

from contextweaver.eval.intervals import bootstrap, pooled_difference


def test_the_same_runs_differ_by_nothing() -> None:
    runs = [(3, 10), (7, 10), (0, 4)]
    assert pooled_difference(runs, runs, rounds=100) == (0.0, 0.0, 0.0)


def test_a_gain_on_every_run_has_an_interval_above_zero() -> None:
    ours = [(8, 10)] * 12
    theirs = [(6, 10)] * 12
    value, low, high = pooled_difference(ours, theirs, rounds=200)
    assert value == pytest.approx(0.2) and low == pytest.approx(0.2) and high == pytest.approx(0.2)


def test_one_run_that_swings_the_pool_leaves_a_tie() -> None:
    theirs = [(5, 10)] * 11 + [(5, 10)]
    ours = [(5, 10)] * 11 + [(10, 10)]  # one run carries the whole gain
    value, low, high = pooled_difference(ours, theirs, rounds=500)
    assert value > 0 and low <= 0 < high


def test_runs_are_pooled_not_averaged() -> None:
    ours = [(1, 1), (0, 99)]  # 1 of 100 pooled, though one run is at 1.0
    theirs = [(0, 1), (0, 99)]
    assert pooled_difference(ours, theirs, rounds=10)[0] == pytest.approx(0.01)


def test_unpaired_runs_are_refused() -> None:
    with pytest.raises(ValueError, match="2 against 1"):
        pooled_difference([(1, 2), (1, 2)], [(1, 2)])


def test_the_interval_brackets_the_value_and_is_reproducible() -> None:
    values = [0.1, 0.9, 0.4, 0.6, 0.5]

    def mean(pick) -> float:
        return sum(values[i] for i in pick) / len(pick)

    first = bootstrap(len(values), mean, rounds=300, seed=3)
    assert first[1] <= first[0] <= first[2] and first[1] < first[2]
    assert bootstrap(len(values), mean, rounds=300, seed=3) == first


def test_no_runs_give_an_empty_interval_not_an_error() -> None:
    assert pooled_difference([], [], rounds=10) == (0.0, 0.0, 0.0)
