"""The real Claude Code and Codex CLIs (tests/clis/package.json) through a real `contextweaver serve`.

Each CLI runs the scripted seven-call session (tests/clis/scripted.py) non-interactively, with its
default model and the README's configuration, isolated (clis.py): with no budget (the upstream must
get the client's bytes), with a budget that forces cuts (the newest step always kept, fields kept,
the prefix frozen between cuts), and with a budget below the root (a clear error, no loop). The
stored session, and the transcript or rollout the CLI wrote, are then read back.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from contextweaver.records import ValidationStatus
from contextweaver.store import Session
from tests.clis import clis
from tests.clis.harness import (
    calls_and_results,
    closing_store,
    prefix_share,
    run_session,
    tool_results,
)

CLIS = [
    pytest.param(
        "claude", marks=pytest.mark.skipif(not clis.installed("claude"), reason=clis.install_hint())
    ),
    pytest.param("codex", marks=pytest.mark.skipif(not clis.installed("codex"), reason=clis.install_hint())),
]
pytestmark = pytest.mark.timeout(600)
CONTEXTWEAVER = Path(sys.executable).with_name("contextweaver")
SESSION_FILES = {"claude": "*.jsonl", "codex": "rollout-*.jsonl"}


@pytest.fixture(scope="module")
def unbudgeted() -> dict[str, object]:
    """Each CLI's session with no budget, run once (the budgeted tests size their budget from it)."""
    return {}


def plain(cli: str, tmp: Path, cache: dict[str, object]):  # noqa: ANN201 - a harness.Session
    if cli not in cache:
        cache[cli] = run_session(cli, tmp)
    return cache[cli]


def newest_call(body: dict) -> str | None:
    calls = calls_and_results(body)[0]
    return calls[-1] if calls else None


def stored(session_store: Path) -> Session:
    with closing_store(session_store) as store:
        (info,) = store.sessions()
        return Session.open(store, info.id)


@pytest.mark.parametrize("cli", CLIS)
def test_the_session_goes_through_unchanged_without_a_budget(
    cli: str, tmp_path: Path, unbudgeted: dict
) -> None:
    run = plain(cli, tmp_path, unbudgeted)
    assert run.run.returncode == 0, run.run.stderr[-2000:] + run.log[-2000:]
    assert "+    return a + b" in run.diff()
    assert run.sent and all(r.status == 200 for r in run.sent), [(r.path, r.status) for r in run.sent]
    # nothing was cut, so the upstream got every woven request as the client's own bytes
    assert {r.sha for r in run.received} == {r.sha for r in run.sent}
    session = stored(run.store)
    assert len(session.graph.nodes) - 1 == 6  # six tool calls stored (the answer is the last reply)
    runs = [node.validation_status for node in session.graph.nodes[1:] if "-m pytest" in node.step.action]
    # the failing run is marked failed, then superseded once the same tests pass
    assert runs == [ValidationStatus.SUPERSEDED, ValidationStatus.PASSED], runs
    assert run.health["loops_stopped"] == 0


@pytest.mark.parametrize("cli", CLIS)
def test_a_budget_that_cuts_keeps_the_newest_step_and_every_field(
    cli: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, unbudgeted: dict
) -> None:
    root, full = plain(cli, tmp_path_factory.mktemp(f"{cli}-plain"), unbudgeted).sizes()
    budget = root + (full - root) // 2
    run = run_session(cli, tmp_path, "--budget", str(budget))
    assert run.run.returncode == 0, run.run.stderr[-2000:] + run.log[-2000:]
    assert "+    return a + b" in run.diff()  # every call saw the result of the one before
    assert run.sent and all(r.status == 200 for r in run.sent), [(r.path, r.status) for r in run.sent]
    with closing_store(run.store) as store:
        (info,) = store.sessions()
        cut = store.cut(info.id)
    assert cut is not None and cut[1]["crossings"] >= 2, cut
    woven = [int(m) for m in re.findall(r"\+\d+ steps, (\d+) of \d+ tokens", run.log)]
    assert woven and max(woven) <= budget
    sent = {r.sha for r in run.sent}
    by_newest = {newest_call(r.body): r.body for r in run.sent}
    for record in run.received:
        body = record.body
        calls, results = calls_and_results(body)
        assert calls == results, (calls, results)  # every call kept is answered, in order
        theirs = tool_results(by_newest[newest_call(body)])
        assert set(tool_results(body)) <= set(theirs)
        for call_id, block in tool_results(body).items():  # a woven result keeps every field but content
            assert {k: v for k, v in block.items() if k not in ("content", "output", "cache_control")} == {
                k: v for k, v in theirs[call_id].items() if k not in ("content", "output", "cache_control")
            }
    bodies = [r.body for r in run.received]
    first_cut = next(i for i, r in enumerate(run.received) if r.sha not in sent)
    shares = prefix_share(bodies[first_cut:])
    assert shares and sum(shares) / len(shares) >= 0.85, shares


@pytest.mark.parametrize("cli", CLIS)
def test_a_budget_below_the_root_is_an_error_the_cli_shows(
    cli: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, unbudgeted: dict
) -> None:
    root, _ = plain(cli, tmp_path_factory.mktemp(f"{cli}-plain"), unbudgeted).sizes()
    run = run_session(cli, tmp_path, "--budget", str(root // 2))
    assert run.run.returncode != 0
    shown = run.run.stdout + run.run.stderr
    assert re.search(r"raise the budget( \(contextweaver serve --budget\))? to at least \d+", shown), shown[
        -2000:
    ]
    assert not run.received  # nothing went upstream
    assert len(run.sent) <= 8, len(run.sent)  # the CLI's own retries at most: no request loop
    assert all(r.status == 400 for r in run.sent)
    assert run.health["budget_refused"] == len(run.sent)
    assert "400 for session" in run.log


@pytest.mark.parametrize("cli", CLIS)
def test_replay_and_graph_read_what_the_cli_wrote(cli: str, tmp_path: Path, unbudgeted: dict) -> None:
    run = plain(cli, tmp_path, unbudgeted)
    (written,) = clis.transcripts(run.run.home, SESSION_FILES[cli])
    replay = subprocess.run([str(CONTEXTWEAVER), "replay", str(written)], capture_output=True, text=True,
                            env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})  # fmt: skip
    assert replay.returncode == 0, replay.stderr
    assert re.search(r": 7 steps", replay.stdout), replay.stdout[:400]
    marks = [line.split()[1] for line in replay.stdout.splitlines() if re.match(r"\s+\d+  \S  ", line)]
    assert "↷" in marks and "✓" in marks and marks.index("↷") < marks.index("✓"), marks  # failed, then fixed
    graph = subprocess.run([str(CONTEXTWEAVER), "graph", str(written), "--out", str(tmp_path / "graph")],
                           capture_output=True, text=True)  # fmt: skip
    assert graph.returncode == 0, graph.stderr
    assert list((tmp_path / "graph").glob("*.html"))
