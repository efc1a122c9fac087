"""`contextweaver mcp`, the real stdio server driven by the MCP client SDK: after Claude Code's own
compaction, a query brings back the exact value printed once before it."""

from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from contextweaver.formats import load_trajectory  # noqa: E402
from contextweaver.integrations.recall_memory import TranscriptMemory, compaction_step  # noqa: E402
from tests.integrations.claude_transcript import write_transcript  # noqa: E402

SRC = str(Path(__file__).resolve().parents[2] / "src")


def call(args: list[str], calls: list[tuple[str, dict]], cwd: Path | None = None) -> list[str]:
    """The text of each tool call's answer, from `python -m contextweaver mcp ARGS` over stdio."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "contextweaver", "mcp", *args],
        env={"PYTHONPATH": SRC, "HOME": str(cwd or Path.cwd())},
        cwd=str(cwd) if cwd else None,
    )

    async def run() -> list[str]:
        out = []
        async with Client(params) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert names == {"recall", "expand", "status"}
            for name, arguments in calls:
                result = await client.call_tool(name, arguments)
                out.append("".join(getattr(block, "text", "") for block in result.content))
        return out

    return anyio.run(run)


def test_after_claude_codes_compaction_a_query_returns_the_value_printed_once(tmp_path: Path) -> None:
    secret = secrets.token_hex(16)
    path = write_transcript(tmp_path / "session.jsonl", secret)
    steps = load_trajectory(path).steps
    assert compaction_step(path, steps) == 31  # the summary step: 30 commands before it
    recall, status, expand = call(
        ["--transcript", str(path)],
        [
            ("recall", {"query": "the deploy token the setup script printed", "budget": 1000}),
            ("status", {}),
            ("expand", {"handle": "1"}),
        ],
    )
    assert f"DEPLOY_TOKEN={secret}" in recall
    assert "[step 1: `./scripts/setup.sh --staging`" in recall
    assert "not held whole in the context: 1-30" in status and "being continued" in status
    assert f"DEPLOY_TOKEN={secret}" in expand


def test_the_newest_transcript_of_the_project_is_found_and_another_sessions_is_never_read(
    tmp_path: Path,
) -> None:
    project = tmp_path / "work" / "shop"
    project.mkdir(parents=True)
    folder = tmp_path / ".claude" / "projects" / str(project.resolve()).replace("/", "-").replace("_", "-")
    folder.mkdir(parents=True)
    other, ours = secrets.token_hex(16), secrets.token_hex(16)
    write_transcript(folder / "older.jsonl", other)
    os.utime(folder / "older.jsonl", (1, 1))
    write_transcript(folder / "newest.jsonl", ours)
    (answer,) = call(
        ["--project", str(project)], [("recall", {"query": "DEPLOY_TOKEN setup", "budget": 4000})], tmp_path
    )
    assert ours in answer and other not in answer


def test_a_query_is_bounded_and_a_handle_past_the_run_is_refused(tmp_path: Path) -> None:
    path = write_transcript(tmp_path / "session.jsonl", "x" * 32, steps=6)
    long, past = call(
        ["--transcript", str(path)], [("recall", {"query": "token " * 500}), ("expand", {"handle": "99"})]
    )
    assert "at most 2000 characters" in long
    assert "no step 99 here" in past


def test_a_transcript_without_compaction_is_searched_whole(tmp_path: Path) -> None:
    path = write_transcript(tmp_path / "session.jsonl", "y" * 32, steps=4, compact=False)
    memory = TranscriptMemory(path)
    assert "y" * 32 in memory.recall("DEPLOY_TOKEN")
    assert "7 step(s); not held whole in the context: 1-7" in memory.status()  # 4 + 3 after


def test_a_stored_session_is_searched_by_its_cut_and_reads_nothing_of_another(tmp_path: Path) -> None:
    from contextweaver.integrations.recall_memory import StoreMemory
    from contextweaver.records import Step
    from contextweaver.store import open_store
    from contextweaver.store.base import digest

    store = open_store(tmp_path / "sessions.db")
    root = [{"role": "user", "content": "Deploy the shop."}]
    for session, value in (("ours", "a" * 32), ("theirs", "b" * 32)):
        store.create_session(session, root, {})
        for n in range(1, 6):
            output = f"DEPLOY_TOKEN={value}" if n == 1 else f"step {n} of {session}"
            step = Step(thought="", action=f"./run_{n}.sh", observation=output)
            store.append_step(session, n, step, digest(list(step.chat_messages())), None)
    store.save_cut(
        "ours", 5, {"upto": 5, "decisions": [[n, "dropped" if n < 3 else "full", "", 0] for n in range(1, 6)]}
    )
    store.close()
    memory = StoreMemory(str(tmp_path / "sessions.db"), "ours")
    answer = memory.recall("DEPLOY_TOKEN", 2000)
    assert "a" * 32 in answer and "b" * 32 not in answer
    assert "not held whole in the context: 1-2" in memory.status()
    assert "no step 6 here" in memory.expand("6")


def test_a_store_without_a_session_binds_its_newest_at_the_first_call_and_keeps_it(tmp_path: Path) -> None:
    """An agent CLI starts its servers before its first request creates the proxy's session: `--store` alone
    binds the store's newest session when the agent first asks."""
    from contextweaver.cli.mcp import memory_of
    from contextweaver.integrations.recall_memory import MemoryUnreadable
    from contextweaver.records import Step
    from contextweaver.store import open_store
    from contextweaver.store.base import digest

    location = str(tmp_path / "sessions.db")
    memory = memory_of(location, None, None, None, tmp_path, "any")
    with pytest.raises(MemoryUnreadable, match="no session stored yet"):  # the server says it as text
        memory.status()
    store = open_store(location)
    root = [{"role": "user", "content": "Deploy the shop."}]
    for session, value in (("older", "a" * 32), ("newer", "b" * 32), ("later", "c" * 32)):
        if session == "later":
            assert "b" * 32 in memory.recall("DEPLOY_TOKEN", 2000)  # bound now, to the newest so far
        store.create_session(session, root, {})
        step = Step(thought="", action="./setup.sh", observation=f"DEPLOY_TOKEN={value}")
        store.append_step(session, 1, step, digest(list(step.chat_messages())), None)
        store.save_cut(session, 1, {"upto": 1, "decisions": [[1, "dropped", "", 0]]})
    store.close()
    answer = memory.recall("DEPLOY_TOKEN", 2000)
    assert "b" * 32 in answer and "a" * 32 not in answer and "c" * 32 not in answer  # kept, never moved


def test_a_proxy_session_is_read_through_its_capability_url(tmp_path: Path) -> None:
    """The proxy's own route (serve/sessions/recall.py) answers; the memory pages through it and ranks here."""
    pytest.importorskip("starlette")
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import parse_qs, urlsplit

    from contextweaver.integrations.recall_memory import ProxyMemory
    from contextweaver.records import Step
    from contextweaver.serve.sessions.recall import PATH, RecallRoute, capability_of
    from contextweaver.store import open_store
    from contextweaver.store.base import digest

    store = open_store(tmp_path / "sessions.db")
    root = [{"role": "user", "content": "Deploy the shop."}]
    caps = {}
    for session, value in (("ours", "c" * 32), ("theirs", "d" * 32)):
        caps[session] = capability_of(store, session)
        store.create_session(session, root, {}, capability=caps[session])
        for n in range(1, 61):
            output = f"DEPLOY_TOKEN={value}" if n == 3 else "\n".join(f"line {j} of {n}" for j in range(80))
            step = Step(thought="", action=f"./run_{n}.sh", observation=output)
            store.append_step(session, n, step, digest(list(step.chat_messages())), None)
    route = RecallRoute(store)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
            parts = urlsplit(self.path)
            cap, handle = parts.path.removeprefix(PATH).split("/", 1)
            status, text = route.answer(cap, handle, parse_qs(parts.query).get("page", ["1"])[0], "")
            body = text.encode()
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        memory = ProxyMemory(f"http://127.0.0.1:{server.server_port}{PATH}{caps['ours']}/")
        assert memory.last_step() == 60
        answer = memory.recall("DEPLOY_TOKEN run_3", 1000)
        assert "c" * 32 in answer and "d" * 32 not in answer
        assert "[step 3: `./run_3.sh`" in memory.expand("3")
        assert "60 step(s)" in memory.status()
    finally:
        server.shutdown()
        store.close()


def test_a_codex_rollout_of_the_project_is_found_and_its_compaction_read(tmp_path: Path, monkeypatch) -> None:
    from contextweaver.integrations.recall_memory import newest_transcript

    fixture = Path(__file__).parents[1] / "formats" / "fixtures" / "codex_rollout.jsonl"
    day = tmp_path / "codex" / "sessions" / "2026" / "03" / "04"
    day.mkdir(parents=True)
    (day / "rollout-2026-03-04T09-00-00-0199aa00.jsonl").write_bytes(fixture.read_bytes())
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    found = newest_transcript(Path("/work/inventory"), "codex")
    assert found.parent == day
    with pytest.raises(Exception, match="no Claude Code or Codex transcript"):
        newest_transcript(tmp_path / "elsewhere", "codex")
    memory = TranscriptMemory(found)
    assert "not held whole in the context: 1-3" in memory.status()  # the summary is step 4
    assert "12:    def reserve(self, n):" in memory.recall("grep def reserve stock.py")
