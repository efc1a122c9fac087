"""The ledger's writes are committed many to a transaction, and a bad one costs no other its row."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from contextweaver.serve.ledger.row_writer import RowWriter
from contextweaver.store.requests import RowWrite
from contextweaver.store.sqlite import SQLiteStore

ROW = {"at": 1.0, "wire": "chat", "status": 0, "streamed": 0, "latency_ms": 1.0, "usage": "missing",
       "reason": "no-step-yet"}  # fmt: skip


class GatedStore(SQLiteStore):
    """Holds its first write until released; refuses rows whose wire is `bad`; counts transactions."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.batches: list[int] = []

    def write_requests(self, writes: Sequence[RowWrite]) -> list[int]:
        self.entered.set()
        self.gate.wait(10)
        if any(write.row["wire"] == "bad" for write in writes):
            raise ValueError("refused")
        self.batches.append(len(writes))
        return super().write_requests(writes)


def held(
    store: GatedStore, writer: RowWriter, rows: list[dict[str, Any]], cancel: int | None = None
) -> list[int | None]:
    """Submit `rows` while the writer's thread holds a first write (and cancel the one at `cancel`), then let
    it go; the rows' ids."""
    store.gate.clear()
    store.entered.clear()
    first = writer.submit(RowWrite(ROW, owner="a"))
    assert store.entered.wait(10)  # the thread holds the first write: the next ones queue meanwhile
    futures = [writer.submit(RowWrite(row, owner="a")) for row in rows]
    if cancel is not None:
        assert futures[cancel].cancel()
    store.gate.set()
    assert first.result(10) is not None
    return [None if future.cancelled() else future.result(10) for future in futures]


def test_writes_waiting_together_are_one_transaction_and_a_bad_one_fails_alone(tmp_path: Path) -> None:
    store = GatedStore(tmp_path / "s.db")
    failed: list[tuple[RowWrite, Exception]] = []
    writer = RowWriter(store, lambda write, exc: failed.append((write, exc)))
    ids = held(store, writer, [{**ROW, "latency_ms": n} for n in range(20)])
    assert store.batches == [1, 20] and ids == list(range(2, 22))

    rows = [{**ROW, "wire": "bad" if n == 7 else "chat", "latency_ms": n} for n in range(20)]
    ids = held(store, writer, rows)
    assert ids[7] is None and [write.row for write, _ in failed] == [rows[7]]
    assert store.batches[2:] == [1] * 20  # the batch failed: each write again alone, the bad one refused
    stored = store.passed_requests("a", after=22)  # after the second held write
    assert [row["latency_ms"] for row in stored] == [n for n in range(20) if n != 7]
    writer.close()
    later = writer.submit(RowWrite(ROW, owner="a"))  # a write after close starts the thread again
    assert later.result(10) == 42

    ids = held(
        store, writer, [{**ROW, "latency_ms": n} for n in range(3)], cancel=1
    )  # its request was cancelled
    assert ids == [44, None, 45] and len(store.passed_requests("a", after=42)) == 3  # the held one, 0 and 2
    writer.close()
