"""A step holding a lone surrogate is stored (as U+FFFD), not refused: no UTF-8 store can hold one."""

from __future__ import annotations

from contextweaver.records import Step
from contextweaver.store import Session, Store

ROOT = [{"role": "system", "content": "agent"}, {"role": "user", "content": "fix it"}]


def test_a_lone_surrogate_is_stored_as_the_replacement_character(store: Store) -> None:
    session = Session.create(store, "odd", ROOT)
    step = Step("look \ud800", "cat f", "bytes \udcff here", messages=())
    session.add_step(step)
    session.add_step(Step("next", "ls", "f"))

    reopened = Session.open(store, "odd")
    stored = reopened.graph.node(1).step
    assert (stored.thought, stored.observation) == ("look \ufffd", "bytes \ufffd here")
    assert reopened.context().messages == session.context().messages
    assert "bytes \ufffd here" in session.context().text()


def test_source_messages_with_a_lone_surrogate_are_stored_cleaned(store: Store) -> None:
    session = Session.create(store, "odd-messages", ROOT)
    messages = ({"role": "assistant", "content": "run \ud83d"}, {"role": "user", "content": "ok"})
    session.add_step(Step("run", "ls", "ok", messages=messages))

    stored = Session.open(store, "odd-messages").graph.node(1).step
    assert stored.messages[0]["content"] == "run \ufffd"


def test_a_lone_surrogate_in_the_root_is_stored_as_the_replacement_character(store: Store) -> None:
    root = [{"role": "system", "content": "agent \udc80"}, {"role": "user", "content": "fix \ud800 it"}]
    session = Session.create(store, "odd-root", root)
    session.add_step(Step("look", "cat f", "f"))

    reopened = Session.open(store, "odd-root")
    assert [m["content"] for m in reopened.info.root] == ["agent \ufffd", "fix \ufffd it"]
    assert reopened.context().messages == session.context().messages
    assert session.context().messages[1]["content"] == "fix \ufffd it"
