"""The README's first example is a budget that cuts, and its summary is what the command it shows prints."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from contextweaver.cli import main

README = Path(__file__).resolve().parents[2] / "README.md"


def summary_rows(text: str) -> list[list[str]]:
    """The rows under the summary's `strategy ... OpenAI` header, split into cells."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:1] == ["strategy"] and "OpenAI" in line)
    rows = []
    for line in lines[start + 2 :]:
        if not re.match(r"^[\w-]+ +[\d,]+ ", line):
            break
        rows.append(line.split())
    return rows


def test_the_first_example_cuts_and_its_figures_are_the_commands() -> None:
    readme = README.read_text(encoding="utf-8")
    first_block = readme.split("```bash", 1)[1].split("```", 1)[0]
    command = re.search(r"contextweaver (replay [^#\n]*?)\s*#", first_block)
    assert command is not None, first_block
    args = command.group(1).split()
    assert "--budget" in args  # the first thing a user runs shows ContextWeaver cutting
    result = CliRunner().invoke(main, args, env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    printed = summary_rows(result.output)
    shown = summary_rows(readme.split("```text", 1)[1].split("```", 1)[0])
    assert sorted(shown) == sorted(printed)  # each strategy's figures; the order is the default's
    by_name = {row[0]: row for row in printed}
    full_history_max = max(
        int(r[2].replace(",", ""))
        for r in summary_rows(CliRunner().invoke(main, ["replay"], env={"COLUMNS": "80"}).output)
    )
    budget = int(args[args.index("--budget") + 1])
    assert full_history_max > budget  # the budget does cut this run
    assert int(by_name["cw"][2].replace(",", "")) <= budget
