"""The multi-budget replay against single-budget replays, and the per-step numbers it records."""

from __future__ import annotations

import pytest

from contextweaver.baselines import BASELINES
from contextweaver.eval.evidence import covered, next_step_evidence
from contextweaver.eval.replay import replay, replay_steps
from contextweaver.eval.trajectory_run import (
    HALF,
    evaluate,
    parse_budgets,
    repo_group,
    run_budget,
    trajectory_id,
)
from contextweaver.formats.base import Trajectory
from contextweaver.strategies import TABLE, build_strategy
from contextweaver.weaver import ContextWeaver

BUDGETS = [120, 400, None]


def test_parse_budgets() -> None:
    assert parse_budgets("4000, 8k,16K,none") == [4000, 8000, 16000, None]
    assert parse_budgets("none,unbounded") == [None]
    assert parse_budgets("4k,half,none") == [4000, HALF, None]
    with pytest.raises(ValueError, match="not a token count"):
        parse_budgets("lots")


def test_ids_and_groups() -> None:
    assert repo_group("django__django-11276") == "django"
    assert repo_group("pytest-dev__pytest-10081") == "pytest-dev"
    assert repo_group("myrun-3") == "myrun"
    assert trajectory_id(Trajectory([], [], source="/x/astropy__astropy-1.traj.json")) == "astropy__astropy-1"


@pytest.mark.parametrize("name", ["sliding_window", "cw-paper"])
def test_one_replay_many_budgets_equals_one_replay_per_budget(bugfix: Trajectory, name: str) -> None:
    def make() -> object:
        return BASELINES.get(name)() if name in BASELINES.names() else ContextWeaver()

    ours = list(replay_steps(bugfix, make(), BUDGETS))
    for budget in BUDGETS:
        theirs = list(replay(bugfix, make, budget))
        assert [s.index for s in ours] == [s.index for s in theirs]
        for mine, reference in zip(ours, theirs, strict=True):
            assert mine.contexts[budget].messages == reference.context.messages
            assert mine.contexts[budget].decisions == reference.context.decisions


def test_evaluate_records_recall_tokens_and_prefix(bugfix: Trajectory) -> None:
    result = evaluate(bugfix, "sliding_window", BUDGETS)
    assert result["trajectory"] == "shop__shop-1" and result["group"] == "shop"
    evidence = {e.index: e.items for e in next_step_evidence(bugfix)}
    unbounded = result["budgets"]["none"]
    assert [s["step"] for s in unbounded] == list(
        range(1, len(bugfix.steps))
    )  # no record after the last step
    strategy = build_strategy("sliding_window").strategy
    for record, step in zip(unbounded, replay(bugfix, lambda: strategy), strict=False):
        items = evidence[step.index + 1]
        assert record["items"] == len(items)
        assert record["covered"] == covered(items, step.context.text())
        assert record["tokens"] == step.context.tokens
    tight = result["budgets"]["120"]
    assert sum(r["covered"] for r in tight) < sum(r["covered"] for r in unbounded)  # the budget costs recall
    assert all(r["tokens"] <= 120 for r in result["budgets"]["120"])
    assert all("prefix_share" in r for r in unbounded[1:]) and "prefix_share" not in unbounded[0]
    # the full history only ever appends: each context starts with the whole previous one
    full = evaluate(bugfix, "full", [None])["budgets"]["none"]
    assert all(r["prefix_share"] > 0.6 for r in full[1:])
    assert all(r["covered"] == r["items"] for r in full)


def test_half_is_each_run_at_half_its_full_history(bugfix: Trajectory) -> None:
    result = evaluate(bugfix, "sliding_window", [HALF, None])
    half, halved = result["budget_tokens"][HALF], result["budgets"][HALF]
    *_, end = replay(bugfix, lambda: build_strategy("full").strategy)
    assert half == run_budget(HALF, bugfix) == end.context.full_history_tokens // 2
    assert all(r["tokens"] <= half for r in halved)
    assert any(r["tokens"] < r["full_tokens"] for r in halved)  # late steps are cut to fit
    assert run_budget(4000, bugfix) == 4000 and run_budget(None, bugfix) is None


def test_edit_steps_carry_edit_support(bugfix: Trajectory) -> None:
    records = evaluate(bugfix, "full", [None])["budgets"]["none"]
    (edit,) = [r for r in records if "edit_items" in r]
    assert edit["step"] == 6 and edit["edit_items"] == edit["edit_covered"] == 3


def test_llm_strategies_count_memory_calls_and_zero_llm_ones_do_not(bugfix: Trajectory) -> None:
    summary = evaluate(bugfix, "llm_summary", [None])
    assert summary["llm"]["calls"] == len(bugfix.steps) - 5  # one call per step leaving the window
    assert summary["llm"]["prompt_tokens"] > 0
    paper = evaluate(bugfix, "cw-llm", [None])
    assert paper["llm"]["calls"] >= len(bugfix.steps)
    assert evaluate(bugfix, "cw-paper", [None])["llm"]["calls"] == 0


def test_every_strategy_name_builds_and_unknown_names_list_valid_ones() -> None:
    for name in TABLE:
        assert build_strategy(name).strategy is not None
    with pytest.raises(ValueError, match="valid: cw, cw-select, cw-paper, full"):
        build_strategy("magic")
