"""`contextweaver tests FILE`: show what the validation layer parses from a test run's output."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

RICH_ROWS = 2_000
"""A longer report is listed as plain aligned lines written at once: rich renders about 5,000 table rows
a second (40,000 tests took 8-18 s against 0.4 s for --json)."""


def as_the_agent_saw(text: str) -> str:
    """A tool output as the integrations read it: mini-swe-agent 2's JSON observation (`mini.yaml`,
    `{"returncode": 0, "output": "..."}`) decoded, as its runs are labelled; any other text as it is."""
    from contextweaver.formats.minisweagent import observation_text

    decoded = observation_text(text.strip())
    return text if decoded == text.strip() else decoded


@click.command(name="tests")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, allow_dash=True), default="-")
@click.option(
    "--command", "command_text", default="", help="The command that produced the output (helps detection)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the parsed report as JSON.")
def command(path: str, command_text: str, as_json: bool) -> None:
    """Parse test-runner output from PATH (or stdin) and print per-test statuses and the runner's totals."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from contextweaver.boundary import verdict as checked_verdict
    from contextweaver.validation import TestTracker
    from contextweaver.validation.tracker import shown_id

    if path == "-" and sys.stdin.isatty():  # a person at a terminal, not a pipe: say what it waits for
        click.echo(
            "reading test-runner output from standard input: paste it and end with Ctrl-D, "
            "or give a file (contextweaver tests out.txt) or a pipe (pytest | contextweaver tests)",
            err=True,
        )
    text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8", errors="replace")
    text = as_the_agent_saw(text)
    tracker = TestTracker()
    verdict = checked_verdict(tracker, 0, command_text, text)
    report = verdict.report
    if as_json:
        payload = {
            "status": verdict.status.value,
            "reason": verdict.reason,
            "runner": report.runner if report else None,
            "complete": report.complete if report else None,
            "failed_signal": report.failed_signal if report else None,
            "totals": report.totals if report else None,
            "tests": {test: status.value for test, status in verdict.results.items()},
        }
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
        return
    console = Console()
    if report is None:
        console.print(f"[yellow]no test-runner output detected[/] ({verdict.reason})")
        return
    shown = [(shown_id(test), status.value) for test, status in report.tests.items()]  # no raw control chars
    if len(shown) > RICH_ROWS:
        width = max(len(test) for test, _ in shown)
        click.echo(f"{report.runner}: {len(report.tests)} tests")
        click.echo("\n".join(f"{test:<{width}}  {status}" for test, status in shown))
    else:
        table = Table(title=f"{report.runner}: {len(report.tests)} tests")
        table.add_column("test")
        table.add_column("status")
        colours = {"passed": "green", "failed": "red", "error": "red", "skipped": "yellow"}
        for test, status in shown:
            table.add_row(escape(test), f"[{colours.get(status, 'cyan')}]{status}[/]")
        console.print(table)
    console.print(f"totals: {report.totals if report.totals is not None else 'none printed'}")
    if not report.complete:
        console.print("[yellow]closing totals line missing (truncated output?)[/]")
    console.print(f"label: [bold]{verdict.status.value}[/] ({verdict.reason})")
    line = tracker.status_line()
    if line:
        console.print(line, markup=False, soft_wrap=True)
