"""Session: steps committed before the memory works on them; resuming rebuilds the same graph."""

from __future__ import annotations

import pytest

from contextweaver.config import ModelConfig, WeaverConfig
from contextweaver.formats import Trajectory
from contextweaver.models import build_model, usage_of
from contextweaver.store import Session, SessionNotFound, Store, digest
from contextweaver.store.replay import signature, stored_signature
from contextweaver.types import ValidationStatus
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
