"""Finding the session a recall capability names in a store of many sessions (issue 44): the old way and by
the capability index (store migration 7).

    PYTHONPATH=src .venv/bin/python benchmarks/recall_lookup.py [--sessions 20100] [--dsn postgresql://...]

old:  the capability of every stored session computed and matched (what an unknown capability cost).
miss/hit:  RecallRoute's lookup of an unknown capability and of a known one.
fill:  the one-off back-fill when the proxy starts on a store whose sessions have none yet.
Median of --repeats runs, in ms. Without --dsn: a SQLite file in a temporary folder, filled the way
benchmarks/session_listing.py fills it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from contextweaver.serve.sessions.recall import SECRET, RecallRoute, capability
from contextweaver.store import Store, open_store

sys.path.insert(0, str(Path(__file__).parent))
from session_listing import fill, median_ms  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20_100)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--dsn", help="a PostgreSQL DSN whose database is empty (default: SQLite)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        location = args.dsn or str(Path(tmp) / "sessions.db")
        if args.dsn is None:  # filled with NORMAL sync, then reopened as the proxy opens it
            from contextweaver.store.sqlite import SQLiteStore

            filling: Store = SQLiteStore(location, synchronous="NORMAL")
        else:
            filling = open_store(location)
        fill(filling, args.sessions, 2)
        filling.close()
        store = open_store(location)
        key = store.secret(SECRET).encode()
        known = capability(key, f"s-{args.sessions // 2}")

        def old(store: Store) -> str | None:
            return {capability(key, info.id): info.id for info in store.sessions()}.get("0" * 24)

        started = time.perf_counter()
        route = RecallRoute(store)
        fill_ms = (time.perf_counter() - started) * 1000
        found = route._session(known)
        assert found is not None and route._session("0" * 24) is None
        miss = median_ms(lambda _: route._session("0" * 24), store, args.repeats)
        hit = median_ms(lambda _: route._session(known), store, args.repeats)
        backend = "postgresql" if args.dsn else "sqlite"
        print(
            f"| backend | sessions | old miss (ms) | miss (ms) | hit (ms) | one-off fill at start (ms) |\n"
            f"|---|---|---|---|---|---|\n| {backend} | {args.sessions:,} | {median_ms(old, store, args.repeats):.1f} | "
            f"{miss:.2f} | {hit:.2f} | {fill_ms:.0f} |"
        )
        store.close()


if __name__ == "__main__":
    main()
