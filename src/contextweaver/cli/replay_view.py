"""What `contextweaver replay` prints: a compact per-step table that fits 80 columns, each row printed as
its step is computed (or, with `--wide`, every column at 132, printed at the end), a legend for its
symbols, and the per-strategy summary."""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from rich import box
from rich.cells import cell_len, set_cell_size
from rich.console import Console
from rich.table import Table

from contextweaver.eval.kept_runs import KeptRuns
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
WHERE_MEASURES = 'docs/evaluation.md, "The metrics"'
PARENTS = 9
GAP = 2
BAR = 30


def ranges(indices: Sequence[int]) -> str:
    """[1,2,3,7] -> "1-3,7": compact lists of steps for a terminal column."""
    return runs_text(index_runs(list(indices)))


def runs_text(runs: Sequence[Sequence[int]]) -> str:
    """[[1, 3], [7, 7]] -> "1-3,7"."""
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


@dataclass
class Row:
    """One step as printed; the node is kept because its label may still change (superseded)."""

    node: Node
    index: int
    action: str
    kept: str
    tokens: list[int]

    @classmethod
    def of(cls, action: str, record: ReplayStep, tokens: list[int], kept: KeptRuns) -> Row:
        """`kept` follows the strategy's contexts step by step (its runs are read, not the whole context)."""
        first = (action.splitlines() or [""])[0][:48]
        return cls(record.node, record.index, first, runs_text(kept.update(record.context.shown)), tokens)

    @property
    def status(self) -> str:
        return self.node.validation_status.value

    @property
    def parents(self) -> str:
        return ",".join(map(str, self.node.parent_ids))


class CompactStream:
    """The compact table, a row printed as each step is computed: step, status symbol, action, parents,
    kept, the first two strategies' tokens, in the console's width (the action and the kept steps share
    what the fixed columns leave; kept folds onto more lines). The widths are fixed before the first row,
    so no row is held; a status is the one known at its step (a later test run's ↷ is listed after).
    Rows are plain lines, not rich tables: a table per row cost a millisecond, a tenth of a step."""

    def __init__(self, console: Console, title: str, names: Sequence[str], steps: int, largest: int) -> None:
        """`largest`: a bound on any context's tokens (the run file's bytes), which sets the token columns."""
        self.console, self.shown = console, list(names[:2])
        self.tokens = [max(len(n), len(f"{largest:,}")) for n in self.shown]
        self.step = max(4, len(str(steps)))
        fixed = self.step + 1 + PARENTS + sum(self.tokens) + GAP * (4 + len(self.shown))
        free = max(24, console.width - fixed)
        self.action = min(40, free * 3 // 5)
        self.kept = free - self.action
        header = self._line("step", "", "action", "parents", f"kept ({names[0]})", self.shown)
        self._write(f"{title}\n{header}\n{'─' * _cells(header)}")

    def _line(self, step: str, mark: str, action: str, parents: str, kept: str, tokens: Sequence[str]) -> str:
        cells = [
            _fit(step, self.step, right=True),
            _fit(mark, 1),
            _fit(action, self.action),
            _fit(parents, PARENTS),
            _fit(kept, self.kept),
            *(_fit(t, w, right=True) for t, w in zip(tokens, self.tokens, strict=True)),
        ]
        return (" " * GAP).join(cells).rstrip()

    def row(self, row: Row) -> None:
        kept = _wrap_at_commas(row.kept, self.kept).split("\n")
        tokens = [f"{t:,}" for t in row.tokens[: len(self.shown)]]
        lines = [
            self._line(str(row.index), SYMBOL.get(row.status, ""), row.action, row.parents, kept[0], tokens)
        ]
        blank = [""] * len(self.shown)
        lines += [self._line("", "", "", "", more, blank) for more in kept[1:]]
        self._write("\n".join(lines))

    def _write(self, text: str) -> None:
        self.console.file.write(text + "\n")
        self.console.file.flush()


CONTROL = {code: " " for code in [*range(32), 127]}
"""Control characters in an action (a tab, an escape sequence) would move the terminal's cursor."""


def _cells(text: str) -> int:
    return len(text) if text.isascii() else cell_len(text)


def _fit(text: str, width: int, right: bool = False) -> str:
    """`text` in exactly `width` terminal cells: cut with an ellipsis, padded on the left when `right`."""
    text = text.translate(CONTROL)
    size = _cells(text)
    if size > width:
        return set_cell_size(text, width - 1) + "…"
    return " " * (width - size) + text if right else text + " " * (width - size)


def print_wide(console: Console, title: str, names: Sequence[str], rows: Sequence[Row]) -> None:
    """The full table (statuses in words, as they stand at the end), widened to what it needs."""
    table = _wide(title, names, rows)
    console.width = max(console.width, Console(width=400).measure(table).maximum)  # never squeezed
    console.print(table)


def print_footer(
    console: Console,
    names: Sequence[str],
    totals: dict[str, Totals],
    *,
    wide: bool,
    budget: int | None,
    explained: ReplayStep | None,
    superseded: Sequence[int] = (),
) -> None:
    """What follows the table: superseded steps (compact view), the legend, the reasons, the summary."""
    if superseded:
        console.print(
            f"↷ superseded later by a run of the same tests: steps {ranges(superseded)}", highlight=False
        )
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


class StatusLine:
    """A progress bar on stderr, redrawn between steps and cleared before a row goes to stdout, so the
    two share a terminal; nothing when stderr is not a terminal (a pipe, a log, a test)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.on = self.stream.isatty()
        self.start = time.perf_counter()
        self.shown = False

    def show(self, text: str) -> None:
        if self.on:
            width = shutil.get_terminal_size().columns - 1
            self.stream.write(f"\r\x1b[K{text[:width]}")
            self.stream.flush()
            self.shown = True

    def steps(self, done: int, total: int) -> None:
        """The bar while step done+1 is computed (nothing once the last is done)."""
        if done >= total:
            return
        filled = BAR * done // max(1, total)
        elapsed = time.perf_counter() - self.start
        self.show(f"[{'#' * filled}{'.' * (BAR - filled)}] step {done + 1:,} of {total:,}, {elapsed:.0f}s")

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False


def console_for() -> Console:
    """The terminal's width (COLUMNS); the wide table widens it to what the table needs."""
    return Console(highlight=False)


def title_of(path: Path, length: int, format_name: str, budget: int | None) -> str:
    under = f"budget {budget:,}" if budget is not None else "no budget"
    return f"{path.name}: {length} steps ({format_name}), {under}"
