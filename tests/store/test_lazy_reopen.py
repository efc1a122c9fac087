"""A reopened session goes on from its last lazy cut: the same context bytes as before the restart."""

from __future__ import annotations

import json

from contextweaver import Session, open_store
from contextweaver.records import Step

ROOT = [{"role": "system", "content": "You fix bugs."}, {"role": "user", "content": "Fix the parser."}]
BUDGET = 6000


def step(i: int) -> Step:
    output = "\n".join(f"def f{i}_{j}(x):  # line {j} of module {i}" for j in range(12))
    return Step(thought=f"Looking at m{i}.", action=f"cat src/m{i}.py", observation=output)


def rendered(session: Session) -> bytes:
    return json.dumps(session.context(BUDGET).messages, ensure_ascii=False).encode()


def cut_session(store_location: str, session_id: str) -> Session:
    """A session whose budget forced a cut, with steps appended unchanged since its last cut."""
    session = Session.create(open_store(store_location), session_id, ROOT)
    last_cut = None
    for i in range(1, 60):
        session.add_step(step(i))
        if session.context(BUDGET).compacted:
            last_cut = i
        elif last_cut is not None and i == last_cut + 3:
            return session
    raise AssertionError("no cut followed by appended steps: the test proves nothing")


def test_a_reopened_session_continues_from_the_cut_it_saved(store_location: str) -> None:
    session = cut_session(store_location, "lazy")
    before = rendered(session)
    reopened = Session.open(open_store(store_location), "lazy")
    after = reopened.context(BUDGET)
    assert not after.compacted  # no second cut (no cache miss) for the restart
    assert json.dumps(after.messages, ensure_ascii=False).encode() == before
    for i in range(50, 53):  # and both go on alike (the first one in memory only: one writer per session)
        session.weaver.add_step(step(i))
        reopened.add_step(step(i))
        expected = json.dumps(session.weaver.context(BUDGET).messages, ensure_ascii=False).encode()
        assert rendered(reopened) == expected


def test_without_the_saved_cut_the_reopened_context_would_differ(store_location: str) -> None:
    """What the saved cut is for: rebuilt from the steps alone, the lazy context cuts anew elsewhere."""
    session = cut_session(store_location, "fresh")
    store = open_store(store_location)
    assert store.cut("fresh") is not None
    reopened = Session.open(store, "fresh")
    reopened.weaver.weaving.forget_cuts()  # as a store without the cut would rebuild it
    rebuilt = reopened.context(BUDGET)
    assert rebuilt.compacted and rebuilt.messages != session.context(BUDGET).messages
