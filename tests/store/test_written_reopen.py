"""A session reopened from the store knows what the agent wrote, as before the restart: its next context
gives the same texts in its note (they are replayed from the stored steps, nothing else is saved)."""

from __future__ import annotations

from contextweaver import Session, open_store
from contextweaver.records import Step

ROOT = [{"role": "system", "content": "You fix bugs."}, {"role": "user", "content": "Fix calc."}]
SCRIPT = "\n".join(f"print('case {n}', check({n}))" for n in range(60))
BUDGET = 4000


def view(n: int) -> Step:
    return Step(f"look {n}", f"cat src/mod_{n}.py", f"value_{n} = {n}\n" * 60)


def test_a_reopened_session_gives_the_same_written_texts(store_location: str) -> None:
    session = Session.create(open_store(store_location), "written", ROOT)
    session.add_step(Step("write it", f"cat <<'EOF' > repro.py\n{SCRIPT}\nEOF", ""))
    session.add_step(Step("edit it", "str_replace_editor str_replace repro.py --old_str 'check(7)' --new_str 'check(70)'", ""))  # fmt: skip
    for n in range(3, 9):
        session.add_step(view(n))
        assert not session.context(BUDGET).compacted
    reopened = Session.open(open_store(store_location), "written")
    run = Step("run it", "python repro.py", "".join(f"case {n} True\n" for n in range(200)))
    contexts = []
    for live in (session, reopened):
        live.weaver.add_step(run)
        contexts.append(live.weaver.context(BUDGET))
    assert contexts[0].compacted and contexts[1].compacted  # the run brought a cut, in both
    assert contexts[0].messages == contexts[1].messages
    assert "repro.py as written by steps 1, 2:" in contexts[1].text() and "check(70)" in contexts[1].text()
