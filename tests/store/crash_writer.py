"""A writer process for the crash test: adds steps to one session, printing an ACK after each returns.

    python crash_writer.py STORE SESSION TOTAL [--die-in-commit K]
    python crash_writer.py --reference TOTAL      # the graph of an uninterrupted in-memory run

Resumes the session when it exists. With --die-in-commit it SIGKILLs itself inside step K's
transaction, after the step row is written and before its node row is: nothing of step K may remain.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from contextweaver.store import Session, open_store  # noqa: E402
from contextweaver.store.replay import signature  # noqa: E402
from tests.store.helpers import crash_steps  # noqa: E402


def reference(total: int) -> None:
    from contextweaver.weaver import ContextWeaver

    root, steps = crash_steps(total)
    weaver = ContextWeaver()
    weaver.begin(root)
    for step in steps:
        weaver.add_step(step)
    print(json.dumps(signature(weaver.graph)))


def main() -> None:
    if sys.argv[1] == "--reference":
        reference(int(sys.argv[2]))
        return
    location, session_id, total = sys.argv[1], sys.argv[2], int(sys.argv[3])
    die_at = int(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[4] == "--die-in-commit" else None
    store = open_store(location)
    root, steps = crash_steps(total)
    session = (
        Session.open(store, session_id)
        if store.session(session_id)
        else Session.create(store, session_id, root)
    )
    if die_at is not None:
        insert = store._insert_node  # type: ignore[attr-defined]

        def insert_or_die(tx: object, sid: str, index: int, *rest: object) -> None:
            if index == die_at:
                os.kill(os.getpid(), signal.SIGKILL)
            insert(tx, sid, index, *rest)

        store._insert_node = insert_or_die  # type: ignore[attr-defined]
    print(json.dumps({"resumed": session.step_count}), flush=True)
    for step in steps[session.step_count :]:
        session.add_step(step)
        print(json.dumps({"ack": session.step_count, "node": signature(session.graph)[-1]}), flush=True)


if __name__ == "__main__":
    main()
