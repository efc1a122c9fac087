"""The README's first commands end with the main job, a replay of the shipped run under a budget that cuts
(scripts/setup.sh runs it last), and the README names that command."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from contextweaver.cli import main

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SETUP = ROOT / "scripts" / "setup.sh"


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


def test_setup_ends_with_the_main_job_and_it_cuts() -> None:
    readme = README.read_text(encoding="utf-8")
    first_block = readme.split("```bash", 1)[1].split("```", 1)[0]
    assert "bash scripts/setup.sh" in first_block and "bash scripts/test.sh" in first_block
    last = [
        line for line in SETUP.read_text().splitlines() if line.strip() and not line.startswith(("#", "echo"))
    ][-1]
    command = re.search(r"contextweaver (replay .*)$", last)
    assert command is not None, last
    assert f"`contextweaver {command.group(1)}`" in readme  # the README says what setup ends with
    args = command.group(1).split()
    assert "--budget" in args  # the first thing a user sees shows ContextWeaver cutting
    result = CliRunner().invoke(main, args, env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    by_name = {row[0]: row for row in summary_rows(result.output)}
    full_history_max = max(
        int(r[2].replace(",", ""))
        for r in summary_rows(CliRunner().invoke(main, ["replay"], env={"COLUMNS": "80"}).output)
    )
    budget = int(args[args.index("--budget") + 1])
    assert full_history_max > budget  # the budget does cut this run
    assert int(by_name["cw"][2].replace(",", "")) <= budget
