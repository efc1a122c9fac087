"""The one replay loop streams: strategies in lockstep share each step's extraction, nothing is kept,
evidence is found in one pass, and coverage is checked message by message with the same result."""

from __future__ import annotations

import sys

import pytest

from contextweaver.eval.evidence import EarlierText, covered, covered_in, evidence_items
from contextweaver.eval.metrics import index_runs, run_indices
from contextweaver.eval.replay import replay, replay_steps
from contextweaver.formats.base import Trajectory
from contextweaver.nodes.extract import cached_extraction, extraction_of
from contextweaver.records import Step
from contextweaver.strategies import REPLAY_DEFAULT, build_strategy


def test_strategies_share_one_extraction_per_step_but_never_a_node(bugfix: Trajectory) -> None:
    weaver = build_strategy(
        "cw", {"recall": False}
    ).strategy  # with recall, placeholders carry the step's handle
    window = build_strategy("sliding_window").strategy
    for strategy in (weaver, window):
        strategy.begin(bugfix.root)
    step = bugfix.steps[0]
    assert cached_extraction(step) is None
    mine, theirs = weaver.add_step(step), window.add_step(step)
    assert mine is not theirs and mine.facts is theirs.facts  # computed once, for both
    assert mine.full_tokens == theirs.full_tokens > 0 and mine.compressed is theirs.compressed
    mine.summary = "the weaver's own summary"
    assert theirs.summary == ""
    first = weaver.context().messages
    first[-1]["content"] = "changed by a caller"  # a context's messages are copies
    assert weaver.context().messages[-1]["content"] != "changed by a caller"


def test_lockstep_replay_equals_separate_replays(bugfix: Trajectory) -> None:
    separate = {
        name: list(replay(bugfix, lambda n=name: build_strategy(n).strategy)) for name in REPLAY_DEFAULT
    }
    copy = Trajectory(bugfix.root, [Step(s.thought, s.action, s.observation) for s in bugfix.steps])
    lockstep = zip(
        *(replay(copy, lambda n=name: build_strategy(n).strategy) for name in REPLAY_DEFAULT), strict=True
    )
    for k, steps in enumerate(lockstep):
        for name, replayed in zip(REPLAY_DEFAULT, steps, strict=True):
            assert replayed.context.messages == separate[name][k].context.messages
            assert replayed.context.decisions == separate[name][k].context.decisions


def test_a_replay_can_start_deep_without_weaving_the_early_steps(bugfix: Trajectory) -> None:
    whole = list(replay(bugfix, lambda: build_strategy("cw").strategy))
    deep = list(replay_steps(bugfix, build_strategy("cw").strategy, first=5))
    assert [s.index for s in deep] == list(range(5, len(bugfix.steps) + 1))
    assert [s.context.messages for s in deep] == [s.context.messages for s in whole[4:]]


def naive(trajectory: Trajectory, items: set[str], nxt: int) -> set[str]:
    """The definition as written (EVALUATION.md), one full scan per question."""
    said = "\n".join(f"{s.thought}\n{s.action}" for s in trajectory.steps[:nxt])
    observations = [s.observation for s in trajectory.steps[:nxt]]
    kept = set()
    for item in items:
        if item in f"{trajectory.system}\n{trajectory.task}" or item in said:
            continue
        seen = sum(1 for o in observations if item in o)
        if seen and seen <= nxt / 2:
            kept.add(item)
    return kept


TRICKY = Trajectory(
    [{"role": "system", "content": "use pkg/base_cfg.py"}, {"role": "user", "content": "fix parse_row"}],
    [
        Step("look", "cat pkg/rows.py", "def parse_row_v2(x):\n    return ROW_LIMIT_42 + read_cell(x)"),
        Step("and", "cat pkg/cells.py", "def read_cell(x): return x  # 'quoted text'"),
        Step("again", "grep -n read_cell pkg", "pkg/cells.py:1: read_cell\npkg/rows.py:2: read_cell"),
        Step("edit", "sed -i 's/ROW_LIMIT_42/ROW_LIMIT_43/' pkg/rows.py", "parse_row_v2 base_cfg.py"),
        Step("use parse_row_v2 'quoted text'", "python -c 'import pkg; pkg.parse_row_v2(42)'", "42"),
    ],
)


@pytest.mark.parametrize("automaton", [True, False], ids=["aho-corasick", "one-search-per-item"])
def test_one_pass_evidence_equals_the_definition(monkeypatch: pytest.MonkeyPatch, automaton: bool) -> None:
    if not automaton:
        monkeypatch.setitem(sys.modules, "ahocorasick", None)  # as when the package is missing
    wanted = [evidence_items(f"{s.thought}\n{s.action}") | {"ROW_LIMIT", "cfg.py", "x"} for s in TRICKY.steps]
    earlier = EarlierText(TRICKY, set().union(*wanted))
    answers = [earlier.only_in_observations(items, nxt) for nxt, items in enumerate(wanted)]
    assert answers == [naive(TRICKY, items, nxt) for nxt, items in enumerate(wanted)]
    assert "parse_row_v2" in answers[4] and "ROW_LIMIT" not in answers[4]  # said by the sed at step 4


def test_coverage_by_message_equals_coverage_of_the_whole_text(bugfix: Trajectory) -> None:
    words = set().union(*(evidence_items(s.observation) for s in bugfix.steps)) | {"x = 1\nmissing"}
    items = frozenset(words | {"not anywhere at all"})
    for name in REPLAY_DEFAULT:
        for replayed in replay(bugfix, lambda n=name: build_strategy(n).strategy, 150):
            text = replayed.context.text()
            assert covered_in(items, replayed.context.messages) == covered(items, text)


def test_kept_steps_are_stored_as_runs() -> None:
    assert index_runs([1, 2, 3, 7, 9, 10]) == [[1, 3], [7, 7], [9, 10]]
    assert run_indices(index_runs(range(1, 10_001))) == set(range(1, 10_001))
    assert index_runs([]) == [] and run_indices([]) == set()


def test_memory_time_counts_the_shared_extraction_for_every_strategy(bugfix: Trajectory) -> None:
    for step in bugfix.steps:
        extraction_of(step)  # computed before the replay, as the eval runner does
    assert all(extraction_of(step).seconds > 0 for step in bugfix.steps)
    for replayed in replay(bugfix, lambda: build_strategy("sliding_window").strategy):
        assert replayed.add_seconds >= extraction_of(bugfix.steps[replayed.index - 1]).seconds
