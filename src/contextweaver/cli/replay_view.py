"""What `contextweaver replay` prints: a compact per-step table that fits 80 columns (or, with `--wide`,
every column at 132), a legend for its symbols, and the per-strategy summary."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Table

from contextweaver.eval.lockstep import Totals
from contextweaver.eval.metrics import index_runs
from contextweaver.eval.replay import ReplayStep
from contextweaver.prompt_cache import PRICES_TAKEN
from contextweaver.records import Node

STATUS_MARK = {"passed": "✓ passed", "failed": "✗ failed", "superseded": "↷ superseded", "unknown": "·"}
SYMBOL = {"passed": "✓", "failed": "✗", "superseded": "↷", "unknown": "·"}
LEGEND = (
    "✓/✗ the step's tests passed/failed, ↷ a later run of the same tests superseded it, · no tests ran; "
    "parents: the earlier steps this one builds on (0 = system prompt and task)"
)
WHERE_MEASURES = 'README, "Evaluate strategies on your own runs"'


def ranges(indices: Sequence[int]) -> str:
    """[1,2,3,7] -> "1-3,7": compact lists of steps for a terminal column."""
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in index_runs(list(indices)))


@dataclass
class Row:
    """One step as printed; the node is kept because its label may still change (superseded)."""

    node: Node
    index: int
    action: str
    kept: str
    tokens: list[int]

    @classmethod
    def of(cls, action: str, record: ReplayStep, tokens: list[int]) -> Row:
        first = (action.splitlines() or [""])[0][:48]
        return cls(record.node, record.index, first, ranges(record.context.kept), tokens)

    @property
    def status(self) -> str:
        return self.node.validation_status.value

    @property
    def parents(self) -> str:
        return ",".join(map(str, self.node.parent_ids))


def print_replay(
    console: Console,
    title: str,
    names: Sequence[str],
    rows: Sequence[Row],
    totals: dict[str, Totals],
    *,
    wide: bool,
    budget: int | None,
    explained: ReplayStep | None,
) -> None:
    if wide:
        table = _wide(title, names, rows)
        console.width = max(console.width, Console(width=400).measure(table).maximum)  # never squeezed
    else:
        table = _compact(title, names, rows, console.width)
    console.print(table)
    console.print(
        f"[dim]{LEGEND}; kept: the steps {names[0]} sends in full; "
        f"{', '.join(names[:2] if not wide else names)}: the tokens of the context each sends.[/dim]"
    )
    if not wide and len(names) > 2:
        console.print(f"[dim]--wide: the tokens of every strategy ({', '.join(names[2:])} too).[/dim]")
    if explained is not None:
        console.print(
            f"why, for {names[0]} (the first strategy), in its context after step {explained.index}:"
        )
        for decision in explained.context.decisions:
            console.print(f"  step {decision.index:>3} {decision.mode:<10} {decision.reason}")
    console.print(_summary(totals))
    console.print(
        f"recall: was what the next step used from earlier outputs still in the context ({WHERE_MEASURES}); "
        f"billed: input at prompt-cache prices ({PRICES_TAKEN}) over the full history without a cache",
        style="dim",
    )
    if budget is not None and "full" in names:
        console.print(
            f"full under a budget: not the whole history; the newest steps that fit in {budget:,} tokens are "
            "whole, older ones placeholders or dropped (the same rule as every strategy's)",
            style="dim",
        )
    if budget is None and "cw" in names:
        console.print(
            "no budget: the lazy default (cw) passes the history through whole until a budget makes it "
            "cut; try --budget 3000"
        )


def _compact(title: str, names: Sequence[str], rows: Sequence[Row], width: int) -> Table:
    """Step, status symbol, action, parents, kept, the first two strategies' tokens, in `width` columns:
    the action and the kept steps share what the fixed columns leave (kept folds onto more lines)."""
    shown = list(names[:2])
    tokens = [
        max(len(n), *(len(f"{r.tokens[i]:,}") for r in rows)) if rows else len(n) for i, n in enumerate(shown)
    ]
    parents = min(9, max([7, *(len(r.parents) for r in rows)]))
    columns = 5 + len(shown)
    fixed = 4 + 1 + parents + sum(tokens) + 2 * (columns - 1)  # each gap: the rule and a padding
    free = max(24, width - fixed)
    longest_kept = max([12, *(len(r.kept) for r in rows)])
    kept = min(longest_kept, max(12, free * 2 // 5))
    action = min(40, free - kept)
    kept = min(longest_kept, free - action)  # what a capped action column leaves goes to the kept steps
    table = Table(title=title, box=box.SIMPLE_HEAD, padding=(0, 1, 0, 0), pad_edge=False, show_edge=False)
    table.add_column("step", justify="right", no_wrap=True, width=4)
    table.add_column("", no_wrap=True, width=1)
    table.add_column("action", no_wrap=True, overflow="ellipsis", width=action)
    table.add_column("parents", no_wrap=True, overflow="ellipsis", width=parents)
    table.add_column(f"kept ({names[0]})", overflow="fold", width=kept)
    for name, size in zip(shown, tokens, strict=True):
        table.add_column(name, justify="right", no_wrap=True, width=size)
    for row in rows:
        cells = [f"{t:,}" for t in row.tokens[: len(shown)]]
        lines = _wrap_at_commas(row.kept, kept)
        table.add_row(str(row.index), SYMBOL.get(row.status, ""), row.action, row.parents, lines, *cells)
    return table


def _wrap_at_commas(text: str, width: int) -> str:
    """ "1-5,7-9,12" in lines of at most `width`, broken after a comma (never inside a range)."""
    parts = text.split(",")
    lines = [""]
    for number, part in enumerate(parts, start=1):
        piece = part if number == len(parts) else f"{part},"
        if lines[-1] and len(lines[-1]) + len(piece) > width:
            lines.append("")
        lines[-1] += piece
    return "\n".join(lines)


def _wide(title: str, names: Sequence[str], rows: Sequence[Row]) -> Table:
    """Every column: the status in words, every strategy's tokens (some 150 columns)."""
    table = Table(title=title)
    table.add_column("step", justify="right")
    table.add_column("action", no_wrap=True, overflow="ellipsis", max_width=34)
    table.add_column("status", no_wrap=True)
    table.add_column("parents", no_wrap=True)
    table.add_column(f"full in {names[0]}", overflow="fold", max_width=22)
    for name in names:
        table.add_column(name, justify="right", no_wrap=True)
    for row in rows:
        tokens = [f"{t:,}" for t in row.tokens]
        table.add_row(
            str(row.index), row.action, STATUS_MARK.get(row.status, ""), row.parents, row.kept, *tokens
        )
    return table


def _summary(totals: dict[str, Totals]) -> Table:
    summary = Table(
        title="Summary per strategy",
        box=box.SIMPLE_HEAD,
        padding=(0, 1, 0, 0),
        pad_edge=False,
        show_edge=False,
    )
    summary.add_column("strategy", no_wrap=True)
    for column in ("mean\ntokens", "max\ntokens", "evidence\nrecall", "items", "from\ncache"):
        summary.add_column(column, justify="right")
    summary.add_column("billed\nAnthropic", justify="right")
    summary.add_column("billed\nOpenAI", justify="right")
    for name, total in totals.items():
        recall = f"{total.hits / total.items:.3f}" if total.items else "n/a"
        mean = total.tokens / total.steps if total.steps else 0
        cost = total.meter.cost()
        summary.add_row(
            name,
            f"{mean:,.0f}",
            f"{total.max_tokens:,}",
            recall,
            str(total.items),
            f"{cost.cache_share:.2f}",
            f"{cost.billed['anthropic']:.2f}",
            f"{cost.billed['openai']:.2f}",
        )
    return summary


def console_for() -> Console:
    """The terminal's width (COLUMNS); the wide table widens it to what the table needs."""
    return Console(highlight=False)


def title_of(path: Path, length: int, format_name: str, budget: int | None) -> str:
    under = f"budget {budget:,}" if budget is not None else "no budget"
    return f"{path.name}: {length} steps ({format_name}), {under}"
