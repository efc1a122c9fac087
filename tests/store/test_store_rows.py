"""The store's rows: sessions, steps in order, annotations, conflicts; on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from contextweaver.nodes.graph import LabelRecord
from contextweaver.records import Parent, Step, ValidationStatus
from contextweaver.store import SessionExists, SessionNotFound, StepConflict, Store, StoredAnnotation, digest

ROOT = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "fix the bug in pager.py"}]


def tool_step(i: int) -> Step:
    call = {
        "id": f"c{i}",
        "type": "function",
        "function": {"name": "bash", "arguments": f'{{"command": "cat f{i}"}}'},
    }
    messages = (
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"c{i}", "content": f"output {i} \u00e9\u6f22"},
    )
    return Step(thought="", action=f"cat f{i}", observation=f"output {i} \u00e9\u6f22", messages=messages,
                meta={"n": i})  # fmt: skip


def test_session_round_trip(store: Store) -> None:
    info = store.create_session("s1", ROOT, {"window": 5}, conversation_key="k1", meta={"agent": "x"})
    assert (info.id, info.steps, info.root, info.config, info.meta) == (
        "s1",
        0,
        ROOT,
        {"window": 5},
        {"agent": "x"},
    )
    assert info.root_digest == digest(ROOT)
    assert store.session("missing") is None
    with pytest.raises(SessionExists):
        store.create_session("s1", ROOT, {})
    store.create_session("s2", ROOT, {}, conversation_key="k2")
    assert [s.id for s in store.sessions()] == ["s1", "s2"]
    assert [s.id for s in store.sessions("k2")] == ["s2"]


def test_steps_are_stored_verbatim_in_order(store: Store) -> None:
    store.create_session("s", ROOT, {})
    steps = [tool_step(i) for i in range(1, 4)]
    for index, step in enumerate(steps, start=1):
        store.append_step("s", index, step, digest(step.messages), "openai")
    stored = store.steps("s")
    assert [s.step for s in stored] == steps
    assert [s.step.meta for s in stored] == [{"n": 1}, {"n": 2}, {"n": 3}]
    assert store.digests("s") == [digest(s.messages) for s in steps]
    assert [s.index for s in store.steps("s", start=2)] == [2, 3]
    info = store.session("s")
    assert info is not None and (info.steps, info.format) == (3, "openai")
    assert store.step_count("s") == 3


def test_a_step_index_is_taken_once(store: Store) -> None:
    store.create_session("s", ROOT, {})
    store.append_step("s", 1, tool_step(1), "d1", None)
    with pytest.raises(StepConflict):
        store.append_step("s", 1, tool_step(9), "d9", None)  # a second writer with a stale count
    with pytest.raises(StepConflict):
        store.append_step("s", 3, tool_step(3), "d3", None)  # no gaps
    assert [s.step for s in store.steps("s")] == [tool_step(1)]
    with pytest.raises(SessionNotFound):
        store.append_step("nope", 1, tool_step(1), "d", None)
    with pytest.raises(SessionNotFound):
        store.step_count("nope")


def test_annotations_round_trip(store: Store) -> None:
    store.create_session("s", ROOT, {})
    for index in (1, 2):
        store.append_step("s", index, tool_step(index), f"d{index}", None)
    first = StoredAnnotation("read f1", "read f1", (Parent(0, 1.0, "root"),), "failed")
    second = StoredAnnotation(
        "fixed f1",
        "read f1; fixed f1",
        (Parent(1, 0.875, "edits the file step 1 read"), Parent(0, 0.25, "task")),
        "passed",
        (LabelRecord(1, ValidationStatus.SUPERSEDED, 2, "test_a now passes"),),
    )
    store.save_annotation("s", 1, first)
    assert store.steps("s")[1].annotation is None  # step 2 not annotated yet
    store.save_annotation("s", 2, second)
    assert [s.annotation for s in store.steps("s")] == [first, second]
    with pytest.raises(StepConflict):
        store.save_annotation("s", 2, second)


def test_sessions_do_not_mix(store: Store) -> None:
    for name in ("a", "b"):
        store.create_session(name, ROOT, {})
    store.append_step("a", 1, tool_step(1), "a1", None)
    store.append_step("b", 1, tool_step(2), "b1", None)
    store.append_step("a", 2, tool_step(3), "a2", None)
    assert [s.step for s in store.steps("a")] == [tool_step(1), tool_step(3)]
    assert [s.step for s in store.steps("b")] == [tool_step(2)]
