"""A writer process for the crash test: adds steps to one session, printing an ACK after each returns.

    python crash_writer.py STORE SESSION TOTAL [--die-before-annotation K]
    python crash_writer.py --reference TOTAL      # the graph of an uninterrupted in-memory run

Resumes the session when it exists. With --die-before-annotation it SIGKILLs itself right after
step K is committed and before its annotation is, the narrowest window of add_step.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from contextweaver.session import Session, signature  # noqa: E402
from contextweaver.store import open_store  # noqa: E402
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
    die_at = int(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[4] == "--die-before-annotation" else None
    store = open_store(location)
    root, steps = crash_steps(total)
    session = (
        Session.open(store, session_id)
        if store.session(session_id)
        else Session.create(store, session_id, root)
    )
    if die_at is not None:
        save = store.save_annotation

        def save_or_die(sid: str, index: int, annotation: object) -> None:
            if index == die_at:
                os.kill(os.getpid(), signal.SIGKILL)
            save(sid, index, annotation)  # type: ignore[arg-type]

        store.save_annotation = save_or_die  # type: ignore[method-assign]
    print(json.dumps({"resumed": session.step_count}), flush=True)
    for step in steps[session.step_count :]:
        session.add_step(step)
        print(json.dumps({"ack": session.step_count, "node": signature(session.graph)[-1]}), flush=True)


if __name__ == "__main__":
    main()
