"""/health is not ok while the store fails to write (a full disk), and ok again once a request is stored."""

from __future__ import annotations

from pathlib import Path

import httpx

from contextweaver.store.sqlite import SQLiteStore
from contextweaver.testing.fake_server import FakeLLMServer
from tests.serve.harness import running_proxy, task, tool_call_reply
from tests.serve.processes import start_serve


def test_health_reports_a_failed_write_until_the_store_takes_one_again(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    with FakeLLMServer(tool_call_reply) as upstream, running_proxy(store, upstream.base_url) as (url, _):
        health = url.removesuffix("/v1") + "/contextweaver/health"
        headers = {"x-contextweaver-session": "full"}
        messages = task("full")
        answer = httpx.post(
            f"{url}/chat/completions", json={"model": "m", "messages": messages}, headers=headers
        )
        reply = answer.json()["choices"][0]["message"]
        big = [*messages, reply,
               {"role": "tool", "tool_call_id": reply["tool_calls"][0]["id"], "content": "x" * 400_000}]  # fmt: skip
        before = httpx.get(health)
        pages = store._db.execute("PRAGMA page_count").fetchone()[0]
        store._db.execute(f"PRAGMA max_page_count = {pages + 2}")  # SQLite's own "database or disk is full"
        full = httpx.post(f"{url}/chat/completions", json={"model": "m", "messages": big}, headers=headers)
        failing = httpx.get(health)
        store._db.execute("PRAGMA max_page_count = 1073741823")
        again = httpx.post(f"{url}/chat/completions", json={"model": "m", "messages": big}, headers=headers)
        after = httpx.get(health)
    assert before.status_code == 200 and before.json()["status"] == "ok"
    assert full.status_code == 503, full.text
    assert failing.status_code == 503 and failing.json()["status"] == "store_failing", failing.text
    assert failing.json()["store_error"].startswith("OperationalError")
    assert again.status_code == 200
    assert after.status_code == 200 and after.json()["status"] == "ok" and "store_error" not in after.json()


def test_a_store_with_a_damaged_page_stops_the_proxy_in_one_line(tmp_path: Path) -> None:
    """The store opened, then the first read of its sessions at start failed: a traceback (issue 53)."""
    db = tmp_path / "s.db"
    store = SQLiteStore(db)
    for n in range(50):
        store.create_session(f"s{n}", [{"role": "user", "content": "task " * 200}], {})
    store.close()
    data = bytearray(db.read_bytes())
    page = 4096
    for number in range(len(data) // page - 8, len(data) // page):  # the sessions' pages, not the schema's
        data[number * page : number * page + 100] = b"\xff" * 100
    db.write_bytes(bytes(data))
    process, _, log, _ = start_serve(tmp_path, "http://127.0.0.1:9/v1", "--store", str(db),
                                     "--weaving-processes", "0")  # fmt: skip
    assert process.wait(60) == 1
    text = log.read_text()
    assert "Traceback" not in text, text[-3000:]
    (error,) = [line for line in text.splitlines() if line.startswith("Error:")]
    assert str(db) in error and "damaged" in error, error
