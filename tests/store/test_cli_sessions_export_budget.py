"""`sessions export` writes what `replay` and `graph` read; `sessions show` weaves with the proxy's budget."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from contextweaver.cli import main
from contextweaver.config import WeaverConfig
from contextweaver.formats import Trajectory, load_trajectory
from contextweaver.store import Session
from contextweaver.store.sqlite import SQLiteStore
from contextweaver.weaver import ContextWeaver
from tests.store.helpers import fix_cycle

PROXY_BUDGET = 1500
"""Under the 1,907 tokens the example run weaves to unbudgeted: the budget changes the context."""


def make_store(tmp_path: Path, bugfix: Trajectory, meta: dict[str, object] | None) -> Path:
    """One session as the proxy stores it: the example run, then a failing and a passing test run."""
    path = tmp_path / "sessions.db"
    store = SQLiteStore(path)
    session = Session.create(store, "s1", bugfix.root, WeaverConfig(mode="per_step"), meta=meta)
    for step in [*bugfix.steps[:12], *fix_cycle()]:
        session.add_step(step, fmt="openai")
    store.close()
    return path


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout if result.exit_code == 0 else result.output


def test_the_default_export_is_read_back_by_replay_and_graph(tmp_path: Path, bugfix: Trajectory) -> None:
    store = str(make_store(tmp_path, bugfix, {"budget": PROXY_BUDGET}))
    code, out = invoke("sessions", "export", "s1", "--store", store)  # the defaults: jsonl to stdout
    assert code == 0
    exported = tmp_path / "s1.jsonl"
    exported.write_text(out, encoding="utf-8")
    run = load_trajectory(exported)
    assert run.format == "jsonl" and run.root == bugfix.root
    assert run.steps == [*bugfix.steps[:12], *fix_cycle()]  # text, action, observation and messages verbatim
    assert run.meta["session"] == "s1" and run.meta["session_meta"] == {"budget": PROXY_BUDGET}
    code, out = invoke("replay", str(exported), "--json", "--strategy", "cw")
    assert code == 0, out
    assert [json.loads(row)["step"] for row in out.splitlines()] == list(range(1, 16))
    code, out = invoke("graph", str(exported), "--out", str(tmp_path / "graph"), "--format", "mermaid")
    assert code == 0, out
    assert (tmp_path / "graph" / "s1.mmd").read_text().count("-->") >= 14
    target = tmp_path / "out.jsonl"
    code, _ = invoke("sessions", "export", "s1", "--store", store, "--out", str(target))
    assert code == 0 and target.read_text(encoding="utf-8") == exported.read_text(encoding="utf-8")


def reference(bugfix: Trajectory, budget: int | None) -> list[dict[str, object]]:
    weaver = ContextWeaver(WeaverConfig(mode="per_step"))
    weaver.begin(bugfix.root)
    for step in [*bugfix.steps[:12], *fix_cycle()]:
        weaver.add_step(step)
    return json.loads(json.dumps(weaver.context(max_tokens=budget).messages))


def test_show_weaves_with_the_budget_the_proxy_stored(tmp_path: Path, bugfix: Trajectory) -> None:
    store = str(make_store(tmp_path, bugfix, {"budget": PROXY_BUDGET}))
    code, out = invoke("sessions", "show", "s1", "--store", store, "--latest", "--json")
    assert code == 0, out
    shown = json.loads(out)
    assert shown["budget"] == PROXY_BUDGET and shown["budget_from"] == "the proxy's"
    assert shown["messages"] == reference(bugfix, PROXY_BUDGET) != reference(bugfix, None)
    code, out = invoke("sessions", "show", "s1", "--store", store, "--latest")
    assert code == 0 and f"budget {PROXY_BUDGET} (the proxy's)" in out
    code, out = invoke("sessions", "show", "s1", "--store", store, "--latest", "--budget", "1200", "--json")
    shown = json.loads(out)
    assert shown["budget"] == 1200 and shown["budget_from"] == "--budget"
    assert shown["messages"] == reference(bugfix, 1200)


def test_without_a_stored_budget_the_context_is_unbudgeted(tmp_path: Path, bugfix: Trajectory) -> None:
    store = str(make_store(tmp_path, bugfix, {"budget": None}))
    code, out = invoke("sessions", "show", "s1", "--store", store, "--step", "15", "--json")
    shown = json.loads(out)
    assert code == 0 and shown["budget"] is None and shown["budget_from"] is None
    assert shown["messages"] == reference(bugfix, None)
    code, out = invoke("sessions", "show", "s1", "--store", store, "--latest")
    assert code == 0 and "no budget" in out


def test_looking_under_another_budget_saves_no_cut_for_the_proxy(tmp_path: Path, bugfix: Trajectory) -> None:
    path = tmp_path / "lazy.db"
    store = SQLiteStore(path)
    session = Session.create(store, "lazy", bugfix.root, meta={"budget": PROXY_BUDGET})  # lazy mode
    for step in bugfix.steps[:12]:
        session.add_step(step)
    session.context(PROXY_BUDGET)
    cut = store.cut("lazy")
    store.close()
    code, out = invoke("sessions", "show", "lazy", "--store", str(path), "--latest", "--budget", "900")
    assert code == 0, out
    store = SQLiteStore(path)
    assert store.cut("lazy") == cut
    store.close()
