"""`contextweaver tests FILE`: show what the validation layer parses from a test run's output."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click


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

    from contextweaver.validation import TestTracker

    text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8", errors="replace")
    tracker = TestTracker()
    verdict = tracker.observe(0, command_text, text)
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
    table = Table(title=f"{report.runner}: {len(report.tests)} tests")
    table.add_column("test")
    table.add_column("status")
    colours = {"passed": "green", "failed": "red", "error": "red", "skipped": "yellow"}
    for test, status in report.tests.items():
        table.add_row(escape(test), f"[{colours.get(status.value, 'cyan')}]{status.value}[/]")
    console.print(table)
    console.print(f"totals: {report.totals if report.totals is not None else 'none printed'}")
    if not report.complete:
        console.print("[yellow]closing totals line missing (truncated output?)[/]")
    console.print(f"label: [bold]{verdict.status.value}[/] ({verdict.reason})")
    line = tracker.status_line()
    if line:
        console.print(line, markup=False, soft_wrap=True)
