"""The replay's first screen: a compact table that fits 80 and 120 columns, a legend, `--wide` for the
full table, and the `-s`/`--instance` options eval and graph have."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from contextweaver.cli import main
from contextweaver.cli.replay_view import _wrap_at_commas


@pytest.mark.parametrize("columns", [80, 120])
def test_the_default_view_fits_the_terminal(columns: int) -> None:
    result = CliRunner().invoke(main, ["replay"], env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(len(line) for line in lines) <= columns
    assert len(lines) < 90  # 33 steps; the wide table took 188 lines at 80 columns
    assert "parents: the earlier steps" in " ".join(result.output.split())  # the legend
    assert "✓" in result.output and "↷" in result.output
    assert "EVALUATION.md" not in result.output and "docs/evaluation.md" in " ".join(result.output.split())


def test_wide_is_the_full_table() -> None:
    result = CliRunner().invoke(main, ["replay", "--wide"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    header = next(line for line in result.output.splitlines() if "step" in line and "action" in line)
    for column in ("status", "full in cw", "cw-select", "sliding_window", "masking", "full"):
        assert column in header
    assert "↷ superseded" in result.output


def test_every_view_shows_the_default_strategy_and_names_it() -> None:
    """The kept column and --explain show `cw` unless -s puts another first, and say which."""
    default = CliRunner().invoke(main, ["replay", "--explain", "--budget", "3000"], env={"COLUMNS": "120"})
    assert default.exit_code == 0, default.output
    assert "kept (cw)" in default.output and "why, for cw (the first strategy)" in default.output
    chosen = CliRunner().invoke(main, ["replay", "--explain", "-s", "cw-select,cw"], env={"COLUMNS": "120"})
    assert "kept (cw-select)" in chosen.output and "why, for cw-select (the first strategy)" in chosen.output


def test_without_a_budget_it_says_the_default_does_not_cut() -> None:
    quiet = CliRunner().invoke(main, ["replay", "--budget", "3000"], env={"COLUMNS": "80"})
    loud = CliRunner().invoke(main, ["replay"], env={"COLUMNS": "80"})
    assert "no budget: the lazy default" in loud.output
    assert "no budget: the lazy default" not in quiet.output and "budget 3,000" in quiet.output


def test_strategy_short_option_and_aliases() -> None:
    result = CliRunner().invoke(main, ["replay", "--json", "-s", "full", "-s", "contextweaver"])
    assert result.exit_code == 0, result.output
    first = json.loads(result.output.splitlines()[0])
    assert {k for k in first if k.startswith("tokens.")} == {"tokens.full", "tokens.cw"}


def test_unknown_strategy_lists_the_valid_ones() -> None:
    result = CliRunner().invoke(main, ["replay", "-s", "cw,nope"])
    assert result.exit_code == 2
    assert "--strategy" in result.output and "nope" in result.output and "cw-select" in result.output
    assert "Traceback" not in result.output


def test_instance_selects_a_run() -> None:
    chosen = CliRunner().invoke(main, ["replay", "--json", "-s", "full", "--instance", "0"])
    assert chosen.exit_code == 0, chosen.output
    missing = CliRunner().invoke(main, ["replay", "--instance", "7"])
    assert missing.exit_code != 0 and "no run '7'" in missing.output


def test_kept_steps_wrap_after_a_comma() -> None:
    text = "2-5,7-9,12,14,18,21-25,27-31"
    lines = _wrap_at_commas(text, 14).splitlines()
    assert all(len(line) <= 14 for line in lines)
    assert "".join(lines) == text and all(line.endswith(",") for line in lines[:-1])
