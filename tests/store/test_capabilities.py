"""Sessions' recall capabilities: filled once for the sessions stored without one, then found by index."""

from __future__ import annotations

from contextweaver.store import Store

ROOT = [{"role": "user", "content": "task"}]


def test_capabilities_are_filled_once_and_found(store: Store) -> None:
    for n in range(5):
        store.create_session(f"s-{n}", ROOT, {}, owner="alice")
    assert store.session_with_capability("cap-s-3") is None
    assert store.fill_capabilities(lambda session_id: f"cap-{session_id}", batch=2) == 5
    found = store.session_with_capability("cap-s-3")
    assert found is not None and found.id == "s-3" and found.owner == "alice"
    store.create_session("late", ROOT, {})
    assert store.fill_capabilities(lambda session_id: f"other-{session_id}") == 1  # only the new one
    assert store.session_with_capability("other-late") is not None
    assert store.session_with_capability("other-s-3") is None  # a filled capability is kept
    store.create_session("given", ROOT, {}, capability="cap-given")  # as a proxy creates a session
    assert store.fill_capabilities(lambda session_id: "unused") == 0
    assert getattr(store.session_with_capability("cap-given"), "id", None) == "given"
