"""Several `contextweaver serve` processes on one store: the same conversation sent to two of them at
once lands in one session, each step once; a replica killed mid-request loses nothing it acknowledged.

PostgreSQL runs three replicas (CONTEXTWEAVER_PG_DSN; skipped without it); SQLite two processes on one
file. Conversations carry no session header, so each replica derives the session from the history.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from contextweaver.serve import read_conversation
from contextweaver.store import Store, open_store
from tests.store.conftest import pg_schema
from tests.store.replicas import CLI, history, kill, replicas

PAIRS = 30
pytestmark = pytest.mark.skipif(not CLI.exists(), reason=f"no contextweaver script next to {CLI.parent}")


async def send(requests: list[tuple[str, list[dict[str, Any]]]]) -> list[httpx.Response | Exception]:
    """Every (proxy URL, messages) request at once; a failed connection comes back as its exception."""
    async with httpx.AsyncClient(
        timeout=120, limits=httpx.Limits(max_connections=2 * len(requests))
    ) as client:
        calls = [client.post(f"{url}/chat/completions", json={"model": "m", "messages": messages})
                 for url, messages in requests]  # fmt: skip
        return list(await asyncio.gather(*calls, return_exceptions=True))


def pairs(urls: list[str], markers: list[str], steps: int) -> list[tuple[str, list[dict[str, Any]]]]:
    """Each conversation twice, to two different replicas."""
    return [
        (urls[(i + j) % len(urls)], history(marker, steps))
        for i, marker in enumerate(markers)
        for j in (0, 1)
    ]


def placement(store: Store, markers: list[str], steps: int) -> tuple[int, int, int]:
    """(forks, duplicate steps, wrong steps): extra sessions per conversation, extra or wrong step rows."""
    by_marker: dict[str, list[str]] = {m: [] for m in markers}
    for info in store.sessions():
        marker = info.root[1]["content"].rsplit(" ", 1)[-1]
        by_marker.get(marker, []).append(info.id)
    forks = sum(max(0, len(ids) - 1) for ids in by_marker.values())
    duplicates = wrong = 0
    for marker, ids in by_marker.items():
        expected = read_conversation(history(marker, steps)).steps
        for session_id in ids:
            stored = [s.step for s in store.steps(session_id)]
            duplicates += max(0, len(stored) - len(expected))
            wrong += sum(1 for a, b in zip(stored, expected, strict=False) if a != b)
    return forks, duplicates, wrong


def race(location: str, urls: list[str], count: int = PAIRS) -> None:
    markers = [f"race-{i:03d}" for i in range(count)]
    for steps in (2, 3):  # creating the sessions, then appending to them
        answers = asyncio.run(send(pairs(urls, markers, steps)))
        assert all(isinstance(a, httpx.Response) and a.status_code == 200 for a in answers), answers
        store = open_store(location)
        forks, duplicates, wrong = placement(store, markers, steps)
        store.close()
        print(f"{len(urls)} replicas, {count} simultaneous pairs, {steps} steps: forks {forks}, "
              f"duplicate steps {duplicates}, wrong steps {wrong}")  # fmt: skip
        assert (forks, duplicates, wrong) == (0, 0, 0)
        named = [a.headers["x-contextweaver-session"] for a in answers if isinstance(a, httpx.Response)]
        assert all(named[i] == named[i + 1] for i in range(0, len(named), 2)), "a pair split in two sessions"


@pytest.fixture(scope="module")
def postgres_replicas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[str], list[Any]]]:
    """Three replicas on one PostgreSQL schema, shared by this module's tests (each uses its own markers)."""
    with (
        pg_schema() as dsn,
        replicas(dsn, 3, tmp_path_factory.mktemp("upstream") / "log.jsonl") as (urls, procs),
    ):
        yield dsn, urls, procs


@pytest.mark.postgres
def test_three_replicas_on_postgres_never_fork_a_conversation(
    postgres_replicas: tuple[str, list[str], Any],
) -> None:
    location, urls, _ = postgres_replicas
    race(location, urls)


@pytest.mark.slow
def test_two_processes_on_one_sqlite_file_never_fork_a_conversation(tmp_path: Path) -> None:
    location = str(tmp_path / "sessions.db")
    with replicas(location, 2, tmp_path / "upstream.jsonl") as (urls, _):
        race(location, urls, 10)  # one file serializes every write: fewer pairs keep the test short


@pytest.mark.postgres
def test_a_replica_killed_mid_request_loses_nothing_it_acknowledged(
    postgres_replicas: tuple[str, list[str], list[Any]],
) -> None:
    location, urls, processes = postgres_replicas
    markers = [f"kill-{i:03d}" for i in range(PAIRS)]

    async def kill_after_some_answers() -> list[httpx.Response | Exception]:
        async with httpx.AsyncClient(timeout=120, limits=httpx.Limits(max_connections=2 * PAIRS)) as client:
            calls = [asyncio.ensure_future(client.post(f"{urls[0]}/chat/completions",
                                                       json={"model": "m", "messages": history(m, 3)}))
                     for m in markers]  # fmt: skip
            done: set[Any] = set()
            while len(done) < PAIRS // 4:  # kill replica 0 while it is still busy with the rest
                finished, _ = await asyncio.wait(calls, return_when=asyncio.FIRST_COMPLETED)
                done |= finished
            kill(processes[0])  # the replica and its weaving workers, mid-request
            return list(await asyncio.gather(*calls, return_exceptions=True))

    answers = asyncio.run(kill_after_some_answers())
    acked = [m for m, a in zip(markers, answers, strict=True)
             if isinstance(a, httpx.Response) and a.status_code == 200]  # fmt: skip
    print(f"replica killed with {len(acked)} of {PAIRS} requests acknowledged")
    assert PAIRS // 4 <= len(acked) < PAIRS
    store = open_store(location)
    for marker in acked:  # every acknowledged request's steps are stored, each once
        ids = [s.id for s in store.sessions() if s.root[1]["content"].endswith(marker)]
        assert len(ids) == 1 and len(store.steps(ids[0])) == 3, marker
    answers = asyncio.run(send([(urls[1 + i % 2], history(m, 4)) for i, m in enumerate(markers)]))
    assert all(isinstance(a, httpx.Response) and a.status_code == 200 for a in answers), answers
    assert placement(store, markers, 4) == (0, 0, 0)
    store.close()
