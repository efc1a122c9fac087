"""Cost of one proxy request, and of reopening a session, as the session grows (not a test).

    python benchmarks/session_cost.py --steps 100,1000,3000,10000 [--requests 5] [--store DSN]

For each length N a session of N steps is stored (OpenAI tool-calling messages: file reads, edits,
pytest runs that fail then pass), then:
- reopen: `Session.open` reads the session back from the store (as a restarted proxy does on the
  first request, whose whole time is shown too);
- request: the agent resends its whole history plus one new step, `--requests` times in a row; the
  time is the proxy's own work before forwarding: JSON parse of the body, reading the conversation,
  storing the new step, weaving, encoding the outgoing body. Medians are printed, with the phases.
Setup writes with `synchronous=NORMAL` to keep it short; the measured proxy uses the default store.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from contextweaver.config import WeaverConfig
from contextweaver.serve.sessions.routing import SessionManager
from contextweaver.serve.wires.conversation import read_conversation
from contextweaver.store import Session, open_store

FAILING = """============================= test session starts ==============================
collected 42 items

tests/test_core.py::test_helper_{n} FAILED                              [ 50%]
tests/test_core.py::test_totals PASSED                                 [100%]

=========================== short test summary info ============================
FAILED tests/test_core.py::test_helper_{n} - AssertionError: assert 3 == 4
========================= 1 failed, 41 passed in 1.02s ========================="""
PASSING = """============================= test session starts ==============================
collected 42 items

tests/test_core.py::test_helper_{n} PASSED                              [ 50%]
tests/test_core.py::test_totals PASSED                                 [100%]

============================== 42 passed in 0.98s =============================="""


def step_messages(rng: random.Random, i: int) -> list[dict[str, Any]]:
    """One tool call and its result: a read, an edit or a test run."""
    path = f"pkg/module_{rng.randrange(40)}.py"
    kind = rng.random()
    if kind < 0.5:
        command, thought = f"nl -ba {path}", f"Read {path} to find where helper is called."
        output = "\n".join(
            f"{n:>4}  def func_{i}_{n}(arg_{n}): return helper_{rng.randrange(500)}(arg_{n})"
            for n in range(30)
        )
    elif kind < 0.8:
        command, thought, output = f"sed -i 's/helper_{i}/helper_{i + 1}/' {path}", f"Patch {path}.", ""
    else:
        command, thought = "python -m pytest -v tests/test_core.py", "Run the tests."
        output = (FAILING if rng.random() < 0.4 else PASSING).format(n=i % 7)
    call = {"id": f"call_{i}", "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": command})}}  # fmt: skip
    return [
        {"role": "assistant", "content": thought, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"call_{i}", "content": output},
    ]


def conversation(steps: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    messages = [
        {"role": "system", "content": "You are a coding agent. Use the bash tool."},
        {"role": "user", "content": "Fix the helper calls so that tests/test_core.py passes."},
    ]
    for i in range(1, steps + 1):
        messages += step_messages(rng, i)
    return messages


def request(manager: SessionManager, session_id: str, body: bytes) -> dict[str, float]:
    """The proxy's own work on one request, phase by phase (seconds)."""
    t0 = time.perf_counter()
    payload = json.loads(body)
    t1 = time.perf_counter()
    conversation = read_conversation(payload["messages"])
    t2 = time.perf_counter()
    woven = manager.weave(conversation, session_id)
    t3 = time.perf_counter()
    assert woven.context is not None and woven.added == 1, f"added {woven.added} steps, not 1"
    payload["messages"] = [*woven.context.messages, *conversation.pending]
    json.dumps(payload).encode()
    t4 = time.perf_counter()
    return {"total": t4 - t0, "parse": t1 - t0, "read": t2 - t1, "weave": t3 - t2, "encode": t4 - t3}


def measure(n: int, requests: int, location: str | None, workdir: Path) -> dict[str, float]:
    messages = conversation(n + requests + 1)
    session_id = f"bench-{n}-{int(time.time())}"
    store_location = location or str(workdir / f"s{n}.db")
    if location is None:
        from contextweaver.store.sqlite import SQLiteStore

        setup_store: Any = SQLiteStore(store_location, synchronous="NORMAL")
    else:
        setup_store = open_store(store_location)
    setup = SessionManager(setup_store, WeaverConfig())
    started = time.perf_counter()
    setup.weave(read_conversation(messages[: 2 + 2 * n]), session_id)
    build = time.perf_counter() - started
    setup_store.close()

    store = open_store(store_location)
    started = time.perf_counter()
    Session.open(store, session_id)
    reopen = time.perf_counter() - started
    manager = SessionManager(store, WeaverConfig())  # a restarted proxy: its first request loads the session
    bodies = [json.dumps({"model": "m", "messages": messages[: 2 + 2 * (n + r + 1)]}).encode()
              for r in range(requests + 1)]  # fmt: skip
    first = request(manager, session_id, bodies[0])["total"]
    samples = [request(manager, session_id, body) for body in bodies[1:]]
    store.close()
    row = {key: statistics.median(s[key] for s in samples) for key in samples[0]}
    row.update(build=build, reopen=reopen, first=first, body_mb=len(bodies[-1]) / 1e6)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", default="100,1000,3000,10000", help="session lengths, comma-separated")
    parser.add_argument("--requests", type=int, default=5, help="requests timed per length (median)")
    parser.add_argument("--store", help="a postgresql:// DSN (default: a new SQLite file per length)")
    args = parser.parse_args()
    print(f"{'steps':>7}{'request ms':>12}{'parse':>8}{'read':>8}{'weave':>8}{'encode':>8}"
          f"{'reopen ms':>11}{'1st request ms':>16}{'body MB':>9}{'build s':>9}")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="cw-cost-") as tmp:
        for n in (int(x) for x in args.steps.split(",")):
            row = measure(n, args.requests, args.store, Path(tmp))
            ms = {
                key: row[key] * 1000
                for key in ("total", "parse", "read", "weave", "encode", "reopen", "first")
            }
            print(f"{n:>7}{ms['total']:>12.1f}{ms['parse']:>8.1f}{ms['read']:>8.1f}{ms['weave']:>8.1f}"
                  f"{ms['encode']:>8.1f}{ms['reopen']:>11.0f}{ms['first']:>16.0f}{row['body_mb']:>9.2f}{row['build']:>9.1f}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
