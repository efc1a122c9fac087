"""Listing one caller's sessions in a store of many callers' (issue 44): the store work behind
GET /contextweaver/sessions (and the dashboard), the old way and by the owner index.

    PYTHONPATH=src .venv/bin/python benchmarks/session_listing.py [--sessions 20100] [--mine 2] [--dsn postgresql://...]

old:  every session and every session's request totals, filtered to the caller in Python.
new:  store.sessions_of(owner, 0, 100) and store.owner_request_totals(owner).
Median of --repeats runs, in ms. Without --dsn: a SQLite file in a temporary folder.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from contextweaver.store import Store, open_store

ROOT = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Fix the test."},
]
REQUEST = {"at": 1.0, "wire": "chat", "status": 200, "streamed": 0, "step": 1, "added": 1, "latency_ms": 1.0,
           "sent_tokens": 10, "full_tokens": 20, "tool_tokens": 0, "cached_tokens": 0, "sim_sent": 0.0,
           "sim_full": 0.0, "usage": "absent"}  # fmt: skip


def fill(store: Store, sessions: int, mine: int) -> None:
    for n in range(sessions):
        owner = "caller" if n >= sessions - mine else f"other-{n % 500}"
        store.create_session(f"s-{n}", ROOT, {"mode": "lazy"}, owner=owner)
        store.record_request(f"s-{n}", REQUEST)


def old(store: Store) -> Any:
    infos, totals = store.sessions(), store.request_totals()
    return [(info, totals.get(info.id)) for info in infos if info.owner == "caller"]


def new(store: Store) -> Any:
    (infos, _), totals = store.sessions_of("caller", 0, 100), store.owner_request_totals("caller")
    return [(info, totals.get(info.id)) for info in infos]


def median_ms(work: Callable[[Store], Any], store: Store, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work(store)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20_100)
    parser.add_argument("--mine", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--dsn", help="a PostgreSQL DSN whose database is empty (default: SQLite)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        location = args.dsn or str(Path(tmp) / "sessions.db")
        if (
            args.dsn is None
        ):  # filled with NORMAL sync (WAL: no fsync per commit), then reopened as the proxy opens it
            from contextweaver.store.sqlite import SQLiteStore

            filling: Store = SQLiteStore(location, synchronous="NORMAL")
        else:
            filling = open_store(location)
        started = time.perf_counter()
        fill(filling, args.sessions, args.mine)
        filling.close()
        print(
            f"filled {args.sessions:,} sessions ({args.mine} the caller's) in {time.perf_counter() - started:.0f} s"
        )
        store = open_store(location)
        assert [i.id for i, _ in old(store)] == [i.id for i, _ in new(store)]
        backend = "postgresql" if args.dsn else "sqlite"
        print(f"| backend | sessions | caller's | old (ms) | new (ms) |\n|---|---|---|---|---|\n"
              f"| {backend} | {args.sessions:,} | {args.mine} | {median_ms(old, store, args.repeats):.1f} | "
              f"{median_ms(new, store, args.repeats):.2f} |")  # fmt: skip
        store.close()


if __name__ == "__main__":
    main()
