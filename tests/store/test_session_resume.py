"""Session: steps committed before the memory works on them; resuming rebuilds the same graph."""

from __future__ import annotations

import pytest

from contextweaver.config import ModelConfig, WeaverConfig
from contextweaver.formats import Trajectory
from contextweaver.models import build_model, usage_of
from contextweaver.records import ValidationStatus
from contextweaver.store import Session, SessionNotFound, Store, digest
from contextweaver.store.base import annotation_of
from contextweaver.store.replay import signature, stored_signature
from contextweaver.weaver import ContextWeaver
from tests.store.helpers import fix_cycle


def test_resume_rebuilds_the_identical_graph(store: Store, bugfix: Trajectory) -> None:
    session = Session.create(store, "bugfix", bugfix.root)
    for step in [*bugfix.steps, *fix_cycle()]:
        session.add_step(step)
    live = signature(session.graph)
    assert any(s[2] == ValidationStatus.SUPERSEDED for s in live), "the example fixes a failing test"
    assert any(len(s[1]) > 1 for s in live), "some steps have several parents"

    resumed = Session.open(store, "bugfix")
    assert signature(resumed.graph) == live
    assert resumed.notes == []
    assert resumed.context().messages == session.context().messages
    assert resumed.weaver.tracker.status_line(600) == session.weaver.tracker.status_line(600)
    assert stored_signature(store.steps("bugfix")) == live


def test_resumed_session_equals_an_in_memory_weaver(store: Store, bugfix: Trajectory) -> None:
    reference = ContextWeaver()
    reference.begin(bugfix.root)
    session = Session.create(store, "s", bugfix.root)
    for step in bugfix.steps[:12]:
        reference.add_step(step)
        session.add_step(step)
    resumed = Session.open(store, "s")
    for step in bugfix.steps[12:]:  # and it goes on exactly as if it had never stopped
        reference.add_step(step)
        resumed.add_step(step)
    assert signature(resumed.graph) == signature(reference.graph)
    assert resumed.context(3000).messages == reference.context(3000).messages
    assert resumed.digests == [digest(s.chat_messages()) for s in bugfix.steps]


def test_resume_does_not_call_the_llm_analyzer_again(store: Store, bugfix: Trajectory) -> None:
    config = WeaverConfig(analyzer="llm", summarizer="llm", memory_model=ModelConfig(backend="fake"))
    first_model = build_model(config.memory_model)
    session = Session.create(store, "llm", bugfix.root, config, model=first_model)
    for step in bugfix.steps[:8]:
        session.add_step(step)
    first_usage = usage_of(first_model)
    assert first_usage is not None and first_usage.total.calls >= 8

    second_model = build_model(config.memory_model)
    resumed = Session.open(store, "llm", model=second_model)
    second_usage = usage_of(second_model)
    assert second_usage is not None and second_usage.total.calls == 0
    assert signature(resumed.graph) == signature(session.graph)
    assert resumed.weaver.config.analyzer == "llm"  # the stored config, not the default one
    resumed.add_step(bugfix.steps[8])  # new steps do use the real analyzer
    assert second_usage.total.calls > 0


def test_a_step_whose_annotation_was_lost_is_annotated_on_resume(store: Store, bugfix: Trajectory) -> None:
    session = Session.create(store, "s", bugfix.root)
    for step in bugfix.steps[:5]:
        session.add_step(step)
    lost = bugfix.steps[5]  # committed, then the process died before the annotation commit
    store.append_step("s", 6, lost, digest(lost.chat_messages()), None)
    assert store.steps("s")[-1].annotation is None

    resumed = Session.open(store, "s")
    assert resumed.step_count == 6
    assert any("step 6" in note for note in resumed.notes)
    reference = ContextWeaver()
    reference.begin(bugfix.root)
    for step in bugfix.steps[:6]:
        reference.add_step(step)
    assert signature(resumed.graph) == signature(reference.graph)
    assert stored_signature(store.steps("s")) == signature(reference.graph)


def test_opening_an_unknown_session_says_so(store: Store) -> None:
    with pytest.raises(SessionNotFound, match="no session 'ghost'"):
        Session.open(store, "ghost")


def test_reopening_reads_rows_and_recomputes_nothing(
    store: Store, bugfix: Trajectory, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = Session.create(store, "rows", bugfix.root)
    for step in [*bugfix.steps, *fix_cycle()]:
        session.add_step(step)

    def recomputed(*args: object, **kwargs: object) -> None:
        raise AssertionError("a stored step was extracted, tokenized or parsed again")

    monkeypatch.setattr("contextweaver.weaver.make_node", recomputed)  # facts and token counts
    monkeypatch.setattr("contextweaver.validation.tracker.TestTracker.observe", recomputed)  # test parsers
    monkeypatch.setattr("contextweaver.nodes.render.placeholder", recomputed)  # observation line counts
    resumed = Session.open(store, "rows")
    assert signature(resumed.graph) == signature(session.graph)
    assert resumed.context(2500).messages == session.context(2500).messages
    assert resumed.weaver.tracker.status_line(600) == session.weaver.tracker.status_line(600)
    live, back = session.graph.nodes[1:], resumed.graph.nodes[1:]
    assert [(n.facts, n.full_tokens, n.compressed_tokens, n.test_results) for n in back] == [
        (n.facts, n.full_tokens, n.compressed_tokens, n.test_results) for n in live
    ]


def test_a_second_process_catches_up_with_only_the_new_steps(store_location: str, bugfix: Trajectory) -> None:
    from contextweaver.store import open_store

    mine, theirs = open_store(store_location), open_store(store_location)  # two proxies, one store
    writer = Session.create(mine, "shared", bugfix.root)
    for step in bugfix.steps[:6]:
        writer.add_step(step)
    reader = Session.open(theirs, "shared")
    for step in bugfix.steps[6:10]:
        writer.add_step(step)
    assert reader.catch_up() == 4 and reader.step_count == 10
    assert signature(reader.graph) == signature(writer.graph)
    reader.add_step(bugfix.steps[10])  # and it goes on from there, the first one catching up in turn
    assert writer.catch_up() == 1
    assert signature(writer.graph) == signature(reader.graph)
    assert writer.context().messages == reader.context().messages
    mine.close()
    theirs.close()


def test_rows_written_before_the_computed_fields_were_kept_still_reopen(
    store: Store, bugfix: Trajectory
) -> None:
    reference = ContextWeaver()
    reference.begin(bugfix.root)
    store.create_session("old", bugfix.root, reference.config.model_dump(mode="json"))
    for index, step in enumerate(bugfix.steps[:8], start=1):  # the two-commit writes of earlier versions
        labels = len(reference.graph.labels)
        node = reference.add_step(step)
        store.append_step("old", index, step, digest(step.chat_messages()), None)
        store.save_annotation("old", index, annotation_of(node, reference.graph.labels[labels:]))
    assert all(s.computed is None for s in store.steps("old"))
    resumed = Session.open(store, "old")
    assert resumed.notes == []
    assert signature(resumed.graph) == signature(reference.graph)
    assert resumed.context().messages == reference.context().messages
