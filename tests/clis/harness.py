"""One scripted session of a real CLI through a real `contextweaver serve`, everything on loopback.

CLI -> recording relay -> proxy -> scripted upstream. The relay keeps the bytes the client sent,
the upstream the bytes it received, the proxy its store and log; `Session` gathers them for tests.
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from contextweaver.serve.wires.wire import tool_tokens
from contextweaver.store import Session as StoredSession
from contextweaver.store import open_store
from contextweaver.tokens import count_text
from tests.clis import clis
from tests.integrations.toyrepo import make_repo
from tests.serve.processes import serve_process

HERE = Path(__file__).resolve().parent


@dataclass
class Record:
    path: str
    raw: bytes
    status: int | None = None

    @property
    def body(self) -> dict[str, Any]:
        return json.loads(self.raw)

    @property
    def sha(self) -> str:
        return hashlib.sha256(self.raw).hexdigest()


@dataclass
class Session:
    cli: str
    run: clis.Run
    repo: Path
    sent: list[Record]
    """What the client sent (through the relay), with the status it got."""
    received: list[Record]
    """What the upstream received."""
    store: Path
    log: str
    health: dict[str, Any]

    def diff(self) -> str:
        return subprocess.run(["git", "diff"], cwd=self.repo, capture_output=True, text=True).stdout

    def sizes(self) -> tuple[int, int]:
        """Tokens of the stored root and of the whole history, each with the tool definitions the
        client sends (which the proxy's budget holds too)."""
        with closing_store(self.store) as store:
            (info,) = store.sessions()
            nodes = StoredSession.open(store, info.id).graph.nodes
        tools = tool_tokens(self.sent[-1].body)
        return nodes[0].full_tokens + tools, sum(node.full_tokens for node in nodes) + tools

    def session_ids(self) -> list[str]:
        with closing_store(self.store) as store:
            return [info.id for info in store.sessions()]


@contextmanager
def closing_store(path: Path) -> Iterator[Any]:
    store = open_store(str(path))
    try:
        yield store
    finally:
        store.close()


@contextmanager
def _process(*command: str) -> Iterator[int]:
    process = subprocess.Popen([sys.executable, *command], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    try:
        yield int(process.stdout.readline())
    finally:
        process.terminate()
        process.wait(20)


def _records(path: Path) -> list[Record]:
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [Record(r["path"], base64.b64decode(r["raw"]), r.get("status")) for r in rows]


def run_session(cli: str, tmp: Path, *serve_args: str, input_tokens: int = 10, codex_config: str = "",
                codex_tables: str = "", recall: bool = False, mcp: bool = False) -> Session:  # fmt: skip
    """The scripted session of `cli` ("claude" or "codex") through a proxy started with `serve_args`
    (`input_tokens`: the prompt size the upstream reports first; `codex_*`: lines and tables added to
    Codex's config.toml; `recall`: the model reads an omitted step back with the note's command once a
    cut happened; `mcp`: the CLI runs `contextweaver mcp --store` on the proxy's store, configured as its
    documentation says, and the model asks its `recall` tool by words once a cut happened)."""
    upstream_log, relay_log = tmp / "upstream.jsonl", tmp / "relay.jsonl"
    repo = make_repo(tmp / "repo")
    script = (
        str(HERE / "scripted.py"),
        str(upstream_log),
        str(input_tokens),
        *(("--recall",) if recall else ()),
        *(("--mcp",) if mcp else ()),
    )
    with (
        _process(*script) as upstream_port,
        serve_process(tmp, f"http://127.0.0.1:{upstream_port}/v1", *serve_args) as proxy,
        _process(str(HERE / "relay.py"), proxy.url, str(relay_log)) as relay_port,
    ):
        base = f"http://127.0.0.1:{relay_port}"
        server = ["--store", str(proxy.store)] if mcp else None
        if cli == "claude":
            run = clis.run_claude(base, repo, tmp / "home", mcp=server)
        else:
            tables = codex_tables + (clis.mcp_toml(server) if server else "")
            run = clis.run_codex(base + "/v1", repo, tmp / "home", config=codex_config, tables=tables)
        health = httpx.get(proxy.url + "/contextweaver/health", headers=proxy.auth).json()
        log = proxy.log()
        store = proxy.store
    return Session(cli, run, repo, _records(relay_log), _records(upstream_log), store, log, health)


def history(body: dict[str, Any]) -> list[Any]:
    return body.get("messages") or body.get("input") or []


def prefix_share(bodies: list[dict[str, Any]]) -> list[float]:
    """Per request after the first: the share of its tokens (tools, system, then history items) a
    provider's prefix cache could serve from the request before it."""
    shares: list[float] = []
    previous: list[str] | None = None
    for body in bodies:
        head = [json.dumps(body.get("tools"), sort_keys=True),
                json.dumps(body.get("system") or body.get("instructions"), sort_keys=True)]  # fmt: skip
        items = head + [json.dumps(item, sort_keys=True) for item in history(body)]
        tokens = [count_text(item) for item in items]
        if previous is not None:
            shared = 0
            while shared < min(len(items), len(previous)) and items[shared] == previous[shared]:
                shared += 1
            shares.append(sum(tokens[:shared]) / max(1, sum(tokens)))
        previous = items
    return shares


def calls_and_results(body: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The ids of the tool calls and of the tool results a request holds, in order."""
    calls: list[str] = []
    results: list[str] = []
    for item in history(body):
        content = item.get("content") if isinstance(item.get("content"), list) else []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                calls.append(block["id"])
            if isinstance(block, dict) and block.get("type") == "tool_result":
                results.append(block["tool_use_id"])
        if item.get("type") in ("function_call", "custom_tool_call"):
            calls.append(item["call_id"])
        if item.get("type") in ("function_call_output", "custom_tool_call_output"):
            results.append(item["call_id"])
    return calls, results


def tool_results(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Anthropic tool_result blocks and Responses output items of a request, by call id."""
    found: dict[str, dict[str, Any]] = {}
    for item in history(body):
        for block in item.get("content") if isinstance(item.get("content"), list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                found[block["tool_use_id"]] = block
        if item.get("type") in ("function_call_output", "custom_tool_call_output"):
            found[item["call_id"]] = item
    return found
