"""`contextweaver eval` as a user first sees it: tables that fit 80 and 120 columns (`--wide` for every
column), no verdict for a strategy that sent the full history nor for a baseline, verdicts at one budget,
a report header without Python dicts, and
token axes in plain thousands."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from contextweaver.cli import main
from contextweaver.examples import __file__ as examples_init

RUN = str(Path(examples_init).parent / "bugfix.jsonl")
STRATEGIES = "full,sliding_window,masking,cw,cw-select"


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One evaluation of the shipped run; every view below reuses its results."""
    out = tmp_path_factory.mktemp("eval")
    result = CliRunner().invoke(
        main,
        ["eval", RUN, "-s", STRATEGIES, "-b", "3000,none", "-o", str(out), "-j", "1", "--no-progress"],
        env={"COLUMNS": "80"},
    )
    assert result.exit_code == 0, result.output
    return out


def view(out: Path, columns: int, *extra: str) -> str:
    args = ["eval", RUN, "-s", STRATEGIES, "-b", "3000,none", "-o", str(out), "-j", "1", "--no-progress"]
    result = CliRunner().invoke(main, [*args, *extra], env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.slow
def test_the_tables_fit_the_terminal(out: Path, columns: int) -> None:
    text = view(out, columns)
    assert max(len(line) for line in text.splitlines()) <= columns
    for name in STRATEGIES.split(","):
        assert name in text
    assert "recall" in text and "billed" in text and "--wide" in text
    assert "tokens: mean o200k tokens per context" in " ".join(text.split())  # the legend


@pytest.mark.slow
def test_a_wider_terminal_shows_more_columns_and_wide_shows_all(out: Path) -> None:
    narrow, wider, wide = view(out, 80), view(out, 120), view(out, 80, "--wide")
    assert "OpenAI" not in narrow.split("--wide")[0] and "OpenAI" in wider
    assert "freshness" not in wider and "freshness" in wide and "Jaccard" in wide
    assert "--wide: every column" not in wide


def test_the_full_history_gets_no_frontier_verdict(out: Path) -> None:
    text = view(out, 120)
    frontier = text.split("against the recency frontier")[1]
    rows = {line.split()[0]: line for line in frontier.splitlines()[3:] if line.strip()}
    assert " n/a " in rows["full"] and "holds" not in rows["full"]
    assert " n/a " in rows["cw"]  # no budget: the lazy default sent the history whole
    assert " n/a " not in rows["cw-select"]
    html = (out / "report.html").read_text(encoding="utf-8")
    full_line = next(line for line in html.splitlines() if "frontier: full recall" in line)
    assert 'class="na"' in full_line and "n/a: the full history" in full_line


def test_a_baseline_gets_no_verdict(out: Path) -> None:
    frontier = view(out, 120).split("against the recency frontier")[1]
    rows = {line.split()[0]: line for line in frontier.splitlines()[3:] if line.strip()}
    assert " n/a " in rows["sliding_window"] and " n/a " in rows["masking"]
    html = (out / "report.html").read_text(encoding="utf-8")
    masking = next(line for line in html.splitlines() if "frontier: masking recall" in line)
    assert 'class="na"' in masking and "n/a: a baseline" in masking and "HOLDS" not in masking


def test_the_cost_verdicts_compare_at_the_same_budget(out: Path) -> None:
    lines = [line for line in view(out, 120).splitlines() if line.startswith("sliding window @")]
    assert [line.split(":")[0] for line in lines] == ["sliding window @3000", "sliding window @none"]
    for line in lines:
        assert "at the same budget" in line and "@" not in line.split(":", 1)[1]  # no cw-x@other budget


def test_the_report_header_reads_as_text(out: Path) -> None:
    html = (out / "report.html").read_text(encoding="utf-8")
    header = html.split("</h1>")[1].split("<h2>")[0]
    assert "{" not in header and "&#x27;:" not in header  # no repr of a dict (a quoted command line is fine)
    assert "anthropic: cache reads 0.1x, writes 1.25x the input price" in header


def test_token_axes_are_plain_thousands() -> None:
    from contextweaver.eval.plots import plain_tokens, plt

    figure, axes = plt.subplots()
    axes.plot([10_695, 10_699, 10_705], [0.9, 0.95, 1.0])  # close together: matplotlib would use an offset
    plain_tokens(axes.xaxis)
    figure.canvas.draw()
    labels = [t.get_text() for t in axes.get_xticklabels() if t.get_text()]
    plt.close(figure)
    assert axes.xaxis.get_offset_text().get_text() == ""
    assert labels and all(label.startswith("10,") for label in labels), labels


def test_help_names_the_strategies_that_run_without_s() -> None:
    from contextweaver.strategies import eval_default

    text = "".join(CliRunner().invoke(main, ["eval", "--help"]).output.split())  # help wraps inside names
    assert f"(default:{','.join(eval_default(real_model=False))};" in text
    assert "--memorynamingarealmodelalsollm_summary,cw-llm,cw-hybrid" in text
    assert "ContextWeaver:cw,cw-select,cw-paper;baselines:" in text and "contextweaverstrategies" in text
    assert "--wide" in text


def test_the_default_runs_no_llm_strategy_on_the_offline_fake() -> None:
    from contextweaver.strategies import eval_default

    offline = eval_default(real_model=False)
    assert {"cw", "cw-select", "cw-paper", "sliding_window"} <= set(offline)
    assert not {"llm_summary", "cw-llm", "cw-hybrid"} & set(offline)
    assert {"llm_summary", "cw-llm", "cw-hybrid"} <= set(eval_default(real_model=True))


def test_a_zero_budget_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["eval", RUN, "-b", "0"])
    assert result.exit_code == 2 and "0 is not a token budget" in result.output
    assert "Traceback" not in result.output and "-22" not in result.output


def test_an_llm_strategy_on_the_offline_fake_is_said_to_be_the_fakes(tmp_path: Path) -> None:
    args = ["eval", RUN, "-s", "cw-llm,cw", "-b", "none", "-o", str(tmp_path), "-j", "1", "--no-progress"]
    result = CliRunner().invoke(main, args, env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    assert "note: cw-llm call a memory model and none is configured" in " ".join(result.stderr.split())
    assert "note: cw," not in result.stderr  # cw calls none
