"""The real Claude Code and Codex CLIs (tests/clis/package.json) through a real `contextweaver serve`.

Each CLI runs the scripted seven-call session (tests/clis/scripted.py) non-interactively, with its
default model and the README's configuration, isolated (clis.py): with no budget (the upstream must
get the client's bytes), with a budget that forces cuts (the newest step always kept, fields kept,
the prefix frozen between cuts), with a budget below the root (a clear error, no loop, and a number
that works when set), at the budget the proxy suggests (the prefix stays cached between cuts), and, for
Codex, compacting on the upstream (its `compaction_trigger`, byte for byte). The stored session, and the
transcript or rollout the CLI wrote, are then read back.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from contextweaver.records import ValidationStatus
from contextweaver.store import Session
from tests.clis import clis, scripted
from tests.clis.harness import (
    Record,
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
pytestmark = [
    pytest.mark.timeout(600),
    pytest.mark.slow,
]  # slow: each test drives a real agent CLI (over 5 s)
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
    assert "raise the budget (contextweaver serve --budget) to at least" in shown, shown[-2000:]
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
    assert "✗" in marks and "✓" in marks and marks.index("✗") < marks.index("✓"), marks  # failed, then fixed
    superseded = re.search(r"↷ superseded later by a run of the same tests: steps (\S+)", replay.stdout)
    assert superseded is not None and str(marks.index("✗") + 1) in superseded.group(1), replay.stdout[-600:]
    graph = subprocess.run([str(CONTEXTWEAVER), "graph", str(written), "--out", str(tmp_path / "graph")],
                           capture_output=True, text=True)  # fmt: skip
    assert graph.returncode == 0, graph.stderr
    assert list((tmp_path / "graph").glob("*.html"))


def refusals(log: str) -> list[int]:
    """The budget each refusal in the proxy's log asks for first (the value that holds the request)."""
    return [
        int(n)
        for n in re.findall(r"raise the budget \(contextweaver serve --budget\) to at least (\d+)", log)
    ]


@pytest.mark.parametrize("cli", CLIS)
def test_every_refusals_number_works_on_the_next_run(
    cli: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, unbudgeted: dict
) -> None:
    """Claude Code answers a refusal by retrying, then by sending its deferred tools inline: the refusal of
    that retry still leads with the value that holds the first attempt, with which no retry happens."""
    root, _ = plain(cli, tmp_path_factory.mktemp(f"{cli}-plain"), unbudgeted).sizes()
    refused = run_session(cli, tmp_path_factory.mktemp(f"{cli}-refused"), "--budget", str(root // 2))
    asked = refusals(refused.log)
    assert asked and refused.run.returncode != 0, refused.log[-2000:]
    assert len(set(asked)) == 1, asked  # every refusal of the run, the retries with more tools included
    run = run_session(cli, tmp_path, "--budget", str(asked[0]))
    assert run.run.returncode == 0, run.run.stderr[-2000:] + run.log[-2000:]
    assert "+    return a + b" in run.diff()
    assert run.sent and all(r.status == 200 for r in run.sent), [(r.path, r.status) for r in run.sent]


@pytest.mark.parametrize("cli", CLIS)
def test_at_the_suggested_budget_the_prefix_stays_cached_between_cuts(
    cli: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, unbudgeted: dict
) -> None:
    first = plain(cli, tmp_path_factory.mktemp(f"{cli}-plain"), unbudgeted)
    advice = re.findall(
        r"session \S+: root ([\d,]+) tokens, .* suggested (\d+): a cut about every", first.log
    )
    assert len(advice) == 1, first.log[-2000:]  # one line, at the session's first request
    suggested = int(advice[0][1])
    run = run_session(cli, tmp_path, "--budget", str(suggested))
    assert run.run.returncode == 0 and "+    return a + b" in run.diff(), run.log[-2000:]
    with closing_store(run.store) as store:
        (info,) = store.sessions()
        cut = store.cut(info.id)
    cuts = cut[1]["crossings"] if cut is not None else 0
    # the second request goes upstream as the client sent it: Claude Code rewrites its own environment
    # message there (content blocks, then a string), so the shares are measured from the third on
    assert run.received[1].sha in {r.sha for r in run.sent}
    shares = prefix_share([r.body for r in run.received[1:]])
    between = sorted(shares)[cuts:]  # a cut rewrites what follows the root: every other request appends
    assert between and min(between) >= 0.9, (cuts, shares)
    assert cuts <= 3, (cuts, len(run.received))  # the suggestion holds about ROOM_STEPS typical steps


def compaction_items(record: Record) -> list[dict]:
    return [
        i for i in record.body.get("input") or [] if i.get("type") in ("compaction_trigger", "compaction")
    ]


@pytest.mark.skipif(not clis.installed("codex"), reason=clis.install_hint())
def test_codex_compacting_on_the_upstream_passes_byte_for_byte(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, unbudgeted: dict
) -> None:
    """With the provider capability `remote_compaction = "v2"` and a first answer reporting a prompt past
    `model_auto_compact_token_limit`, Codex sends a `compaction_trigger` item on the ordinary stream and
    continues from the one `compaction` item it gets back: under a budget that cuts, each of those requests
    reaches the upstream as the client sent it."""
    root, full = plain("codex", tmp_path_factory.mktemp("codex-plain"), unbudgeted).sizes()
    run = run_session("codex", tmp_path, "--budget", str(root + (full - root) // 2), input_tokens=500_000,
                      codex_config="model_auto_compact_token_limit = 2000\n", codex_tables=clis.REMOTE_COMPACTION)  # fmt: skip
    assert run.run.returncode == 0, run.run.stderr[-2000:] + run.log[-2000:]
    assert "+    return a + b" in run.diff()
    compacting = [r for r in run.sent if compaction_items(r)]
    assert [i["type"] for i in compaction_items(compacting[0])] == ["compaction_trigger"]
    assert len(compacting) >= 2 and all(r.status == 200 for r in compacting)
    received = {r.sha for r in run.received}
    assert all(r.sha in received for r in compacting)  # byte for byte, the trigger and every later request
    (item,) = compaction_items(compacting[1])
    assert item["encrypted_content"] == "gAAAA-scripted-compaction-of-the-history=="  # the answer, unchanged


def result_text(block: dict) -> str:
    """A tool result's text: Anthropic's content (a string or text blocks), or a Responses output."""
    content = block.get("content", block.get("output", ""))
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


@pytest.mark.parametrize("cli", CLIS)
def test_after_a_cut_the_cli_reads_an_omitted_step_back_through_its_shell(
    cli: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, unbudgeted: dict
) -> None:
    """The note's `curl` run by the CLI's own shell tool returns the step as the CLI first sent it."""
    root, full = plain(cli, tmp_path_factory.mktemp(f"{cli}-plain"), unbudgeted).sizes()
    # room for the answer (the failing test run) after the cut: at half the history the next weave trims it
    # (by a few dozen tokens, the trim marked `#7`): Claude Code's tools take most of the budget
    run = run_session(cli, tmp_path, "--budget", str(root + (full - root) * 3 // 4), recall=True)
    assert run.run.returncode == 0, run.run.stderr[-2000:] + run.log[-2000:]
    call_id = "toolu_step7" if cli == "claude" else "call_step7"
    answered = [r.body for r in run.sent if call_id in tool_results(r.body)]
    assert answered, "the CLI ran the recall command and sent its result"
    asked = re.search(r"/contextweaver/recall/[0-9a-f]{24}/(\d+)", json.dumps(answered[0]))
    assert asked, "the call is the note's command"
    result = result_text(tool_results(answered[0])[call_id])
    step = stored(run.store).graph.nodes[int(asked.group(1))].step
    assert f"[step {asked.group(1)}: " in result and step.observation in result, result[:600]
    forwarded = [r.body for r in run.received if call_id in tool_results(r.body)]
    got = result_text(tool_results(forwarded[0])[call_id]) if forwarded else ""
    assert step.observation in got, got[:3000]  # the model got it whole: the next weave did not trim it


MCP = pytest.mark.skipif(
    not clis.mcp_available(), reason="the mcp extra is not installed: pip install 'contextweaver-agents[mcp]'"
)


@MCP
@pytest.mark.parametrize("cli", CLIS)
def test_after_a_cut_the_cli_asks_the_mcp_server_by_words_and_gets_the_failing_line_back(
    cli: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, unbudgeted: dict
) -> None:
    """`contextweaver mcp --store` configured as each CLI's documentation says (Claude Code: `--mcp-config`,
    the tool allowed; Codex: `[mcp_servers.contextweaver]`); after a cut the model calls its `recall` tool
    with words, not a step number, and the next request holds the failing test's line, byte for byte."""
    root, full = plain(cli, tmp_path_factory.mktemp(f"{cli}-plain"), unbudgeted).sizes()
    run = run_session(cli, tmp_path, "--budget", str(root + (full - root) * 3 // 4), mcp=True)
    assert run.run.returncode == 0, run.run.stderr[-2000:] + run.log[-2000:]
    assert "+    return a + b" in run.diff()
    call_id = "toolu_step7" if cli == "claude" else "call_step7"
    answered = [r.body for r in run.sent if call_id in tool_results(r.body)]
    assert answered, "the model asked the MCP server once a cut happened, and the CLI sent the answer"
    assert scripted.MCP_TOOL in json.dumps(answered[0])  # the call named the server's tool
    failing_run = stored(run.store).graph.nodes[scripted.FAILING_RUN].step.observation
    failing = next(
        line for line in failing_run.splitlines() if line.startswith("FAILED test_calc.py::test_add")
    )
    result = result_text(tool_results(answered[0])[call_id])
    assert f'[recall "{scripted.MCP_QUERY}": ' in result and f"\n{failing}\n" in result, result[:3000]
    forwarded = [r.body for r in run.received if call_id in tool_results(r.body)]
    got = result_text(tool_results(forwarded[0])[call_id]) if forwarded else ""
    assert f"\n{failing}\n" in got, got[:3000]  # the upstream got the line as pytest printed it
