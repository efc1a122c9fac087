"""The run index answers what a walk over the whole run would: the newest position whose value fits a bound,
each file's latest change, the dropped steps' shared decisions, and a run that changed is read again."""

from __future__ import annotations

import pickle

from hypothesis import given
from hypothesis import strategies as st

from contextweaver.records import Decision, Facts, Node, Step
from contextweaver.weaving.run_index import NONE, MinTree, run_index


def walk(values: list[int], bound: float, before: int) -> int:
    return next((p for p in range(min(before, len(values)) - 1, -1, -1) if values[p] <= bound), -1)


@given(
    st.lists(st.integers(0, 60), max_size=70),
    st.lists(st.tuples(st.integers(0, 80), st.integers(0, 75)), max_size=25),
    st.lists(st.tuples(st.integers(0, 69), st.integers(0, 60)), max_size=10),
)
def test_last_at_most_is_the_walk_from_the_newest(values, queries, updates) -> None:
    tree = MinTree()
    for value in values:
        tree.append(value)
    for position, value in updates:
        if position < len(values):
            values[position] = value
            tree.set(position, value)
    for bound, before in queries:
        assert tree.last_at_most(bound, before) == walk(values, bound, before)


def node(index: int, edited: tuple[str, ...] = (), action: str = "") -> Node:
    step = Step(action=action or f"sed -i s/a/b/ {' '.join(edited)}", observation="ok")
    return Node(index, step, facts=Facts(edited_files=frozenset(edited)), full_tokens=10, compressed_tokens=5)


def test_each_files_latest_change_moves_with_the_run() -> None:
    root = node(0)
    steps = [node(1, ("a.py",)), node(2, ("b.py",)), node(3, ("a.py", "c.py")), node(4)]
    run = run_index(root, steps[:2])
    latest = run.latest_edit_calls()
    assert latest.last_at_most(NONE - 1, 2) == 1  # b.py's change; a.py's too (step 1)
    run = run_index(root, steps)
    found = [p for p in range(4) if latest.tree[latest.capacity + p] < NONE]
    assert found == [1, 2]  # step 1 is no longer a.py's latest change; step 3 is a.py's and c.py's


def test_a_run_that_changed_is_read_again() -> None:
    root = node(0)
    first = [node(1), node(2)]
    run = run_index(root, first)
    assert [n.index for n in run.steps] == [1, 2]
    other = [node(1), node(2), node(3)]  # new nodes (the run was rebuilt), not the ones indexed
    run = run_index(root, other)
    assert run.steps == other and all(a is b for a, b in zip(run.steps, other, strict=True))
    assert run.full_sums[-1] == 30


def test_dropped_decisions_are_shared_and_listed_as_they_stood() -> None:
    root = node(0)
    steps = [node(i) for i in range(1, 6)]
    run = run_index(root, steps)
    kept = Decision(3, "full", "kept", 10)
    first = run.decisions([2], [kept])
    assert len(first) == 5
    again = run.decisions([], [])
    assert all(a is b for a, b in zip(first, again, strict=True) if a is not kept)  # made once, shared
    run = run_index(root, [*steps, node(6)])
    grown = run.decisions([0], [Decision(1, "compressed", "old", 2)])
    assert [(d.index, d.mode) for d in first] == [
        (1, "dropped"),
        (2, "dropped"),
        (3, "full"),
        (4, "dropped"),
        (5, "dropped"),
    ]
    assert [d.index for d in grown] == [1, 2, 3, 4, 5, 6] and grown[0].mode == "compressed"
    assert first == list(first) and pickle.loads(pickle.dumps(first)) == list(first)
    late = run.decisions([], [])
    run_index(root, [node(1), node(2)])  # the run read again from the start: what was woven stays
    assert [d.index for d in late] == [1, 2, 3, 4, 5, 6]


def brute_ranges(indices: list[int]) -> str:
    parts: list[str] = []
    for index in sorted(indices):
        if parts and parts[-1][1] == index - 1:
            parts[-1][1] = index
        else:
            parts.append([index, index])  # type: ignore[arg-type]
    return ", ".join(f"{a}-{b}" if b > a else str(a) for a, b in parts)


@given(st.lists(st.integers(1, 3), min_size=1, max_size=40), st.data())
def test_omitted_reads_as_the_list_of_left_out_steps(gaps, data) -> None:
    """Ranges, count, first, last and newest of the steps left out, numbered with gaps or not."""
    from contextweaver.weaving.working_state import Omitted

    numbers = [sum(gaps[: i + 1]) for i in range(len(gaps))]
    steps = [node(n, ("f.py",) if n % 3 == 0 else ()) for n in numbers]
    chosen = data.draw(st.sets(st.sampled_from(numbers), max_size=len(numbers) - 1))
    left_out = [n for n in numbers if n not in chosen]
    omitted = Omitted(run_index(node(0), steps), chosen)
    assert len(omitted) == len(left_out)
    assert omitted.ranges() == brute_ranges(left_out)
    assert (omitted.first(), omitted.last()) == (min(left_out), max(left_out))
    assert [n.index for n in omitted.newest()] == sorted(left_out, reverse=True)
    assert [n.index for n in omitted.newest(changed=True)] == [
        n for n in sorted(left_out, reverse=True) if n % 3 == 0
    ]


@given(st.integers(0, 30), st.integers(-35, 35), st.integers(-35, 35), st.integers(-3, 3).filter(bool))
def test_newest_first_reads_as_its_list(last, start, stop, stride) -> None:
    """A plan of every step, made as it is read, is the list it stands for."""
    from contextweaver.weaving.plan import NewestFirst

    listed = [(i, "why") for i in range(last, 0, -1)]
    made = NewestFirst(last, "why")
    assert list(made) == listed and len(made) == len(listed)
    assert made[start:stop:stride] == listed[start:stop:stride]
    for position in (start, stop):
        if -len(listed) <= position < len(listed):
            assert made[position] == listed[position]
