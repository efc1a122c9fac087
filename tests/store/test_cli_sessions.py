"""`contextweaver sessions list / show / export` on a real store file."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from contextweaver.cli import main
from contextweaver.config import WeaverConfig
from contextweaver.formats import Trajectory
from contextweaver.serve import read_conversation
from contextweaver.store import Session
from contextweaver.store.sqlite import SQLiteStore
from contextweaver.weaver import ContextWeaver
from tests.store.helpers import fix_cycle

PER_STEP = WeaverConfig(mode="per_step")
"""The stored context of a step, woven anew (the default lazy mode keeps an unbudgeted history whole)."""


def tool_conversation(n: int) -> list[dict[str, object]]:
    messages: list[dict[str, object]] = [
        {"role": "system", "content": "agent"},
        {"role": "user", "content": "fix it"},
    ]
    for i in range(n):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": f"cat m{i}.py"})}}  # fmt: skip
        messages += [{"role": "assistant", "content": f"step {i}", "tool_calls": [call]},
                     {"role": "tool", "tool_call_id": f"c{i}", "content": f"def m{i}(): pass"}]  # fmt: skip
    return messages


def make_store(tmp_path: Path, bugfix: Trajectory) -> Path:
    path = tmp_path / "sessions.db"
    store = SQLiteStore(path)
    session = Session.create(store, "bugfix", bugfix.root, PER_STEP)
    for step in [*bugfix.steps[:14], *fix_cycle()]:
        session.add_step(step)
    conversation = read_conversation(tool_conversation(6))
    tools = Session.create(store, "tools", conversation.root)
    for step in conversation.steps:
        tools.add_step(step, fmt=conversation.format)
    store.close()
    return path


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["sessions", *args])
    return result.exit_code, result.output


def test_list_and_show(tmp_path: Path, bugfix: Trajectory) -> None:
    store = str(make_store(tmp_path, bugfix))
    code, out = run("list", "--store", store, "--json")
    assert code == 0 and [(s["id"], s["steps"]) for s in json.loads(out)] == [("bugfix", 17), ("tools", 6)]
    code, out = run("list", "--store", store)
    assert code == 0 and "bugfix" in out and "tools" in out
    code, out = run("show", "bugfix", "--store", store)
    assert code == 0 and "N17" in out and "labels N15 superseded" in out
    code, out = run("show", "bugfix", "--store", store, "--json")
    nodes = json.loads(out)["nodes"]
    assert [n["index"] for n in nodes] == list(range(1, 18)) and all(n["parents"] for n in nodes)


def test_show_the_woven_context_of_any_step(tmp_path: Path, bugfix: Trajectory) -> None:
    store = str(make_store(tmp_path, bugfix))
    code, out = run("show", "bugfix", "--store", store, "--step", "10", "--budget", "2500", "--json")
    assert code == 0
    reference = ContextWeaver(PER_STEP)
    reference.begin(bugfix.root)
    for step in bugfix.steps[:10]:
        reference.add_step(step)
    shown = json.loads(out)  # over the budget, the default lazy mode weaves: old outputs are compressed
    assert shown["messages"] == json.loads(json.dumps(reference.context(max_tokens=2500).messages))
    assert len(shown["decisions"]) == 10 and {d["mode"] for d in shown["decisions"]} == {"full", "compressed"}
    code, out = run("show", "bugfix", "--store", store, "--latest", "--budget", "1500")
    assert code == 0 and "context after step 17" in out
    code, out = run("show", "bugfix", "--store", store, "--step", "99")
    assert code != 0 and "not 99" in out


def test_export_round_trips_through_the_reader(tmp_path: Path, bugfix: Trajectory) -> None:
    store = str(make_store(tmp_path, bugfix))
    target = tmp_path / "tools.json"
    code, _ = run("export", "tools", "--store", store, "--format", "messages", "--out", str(target))
    assert code == 0
    exported = json.loads(target.read_text())["messages"]
    assert read_conversation(exported).steps == read_conversation(tool_conversation(6)).steps
    code, out = run("export", "bugfix", "--store", store, "--format", "json")
    assert code == 0 and json.loads(out)["steps"] == 17


def test_unknown_session_and_missing_store(tmp_path: Path, bugfix: Trajectory) -> None:
    store = str(make_store(tmp_path, bugfix))
    code, out = run("show", "ghost", "--store", store)
    assert code == 1 and "no session 'ghost'" in out
    code, out = run("list", "--store", str(tmp_path / "absent.db"))
    assert code == 2 and "no store at" in out
    assert not (tmp_path / "absent.db").exists()
