"""The eval report's tables for a terminal: the columns that fit its width, chosen in a fixed order of
importance (strategy and budget always), so 80 columns read as well as 240; `eval --wide` prints them all."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich import box
from rich.table import Table

from contextweaver.eval.aggregate import Row
from contextweaver.eval.figures import number
from contextweaver.eval.frontier import BUCKETS
from contextweaver.eval.frontier_report import FrontierRow

GAP = 2
"""Between two columns of a SIMPLE_HEAD table: the (blank) rule and one padding."""
COMPACT = {
    # key: (short header, format); the order is the order a narrow terminal keeps them in
    "tokens_mean": ("tokens", "{:,.0f}"),
    "ratio_to_full": ("vs\nfull", "{:.2f}"),
    "recall_pooled": ("recall", "{:.3f}"),
    "billed_anthropic": ("billed\nAnthropic", "{:.2f}"),
    "trail_pooled": ("trail", "{:.3f}"),
    "failing_pooled": ("failing\ntests", "{:.3f}"),
    "history_pooled": ("history\nevidence", "{:.3f}"),
    "cache_share": ("from\ncache", "{:.2f}"),
    "billed_openai": ("billed\nOpenAI", "{:.2f}"),
    "tokens_p95": ("p95", "{:,.0f}"),
    "cuts_marked": ("cuts\nmarked", "{:.2f}"),
    "edit_pooled": ("edit\nsupport", "{:.3f}"),
    "time_vs_sliding": ("time vs\nwindow", "{:.1f}x"),
    "llm_calls_per_step": ("LLM\ncalls", "{:.2f}"),
}
LEGEND = (
    "tokens: mean o200k tokens per context; vs full: share of the full history's; recall: next-step "
    "evidence recall; trail / failing tests: share of the files changed so far / of the tests failing now "
    "that the context names; billed: input at prompt-cache prices over the full history without a cache"
)


@dataclass
class Column:
    header: str
    cells: list[str]
    rank: int
    """0: always shown; otherwise kept, lowest rank first, while the width allows."""
    right: bool = True

    @property
    def width(self) -> int:
        return max([*(len(line) for line in self.header.split("\n")), *(len(c) for c in self.cells)])


def fitted(
    title: str, columns: Sequence[Column], width: int, breaks: Sequence[bool] = ()
) -> tuple[Table, list[str]]:
    """The columns that fit `width`, in their given order; also the headers left out. `breaks[n]`: a
    section ends after row n."""
    used = sum(c.width for c in columns if c.rank == 0) + GAP * (sum(1 for c in columns if c.rank == 0) - 1)
    keep = {id(c) for c in columns if c.rank == 0}
    left_out = []
    for column in sorted((c for c in columns if c.rank), key=lambda c: c.rank):
        if used + GAP + column.width <= width:
            keep.add(id(column))
            used += GAP + column.width
        else:
            left_out.append(column.header.replace("\n", " "))
    shown = [c for c in columns if id(c) in keep]
    table = Table(title=title, box=box.SIMPLE_HEAD, padding=(0, 1, 0, 0), pad_edge=False, show_edge=False)
    for column in shown:
        table.add_column(column.header, justify="right" if column.right else "left", no_wrap=True)
    for n in range(len(columns[0].cells) if columns else 0):
        table.add_row(*(c.cells[n] for c in shown), end_section=n < len(breaks) and breaks[n])
    return table, left_out


def compact_table(rows: Sequence[Row], failures: bool, width: int) -> tuple[Table, list[str]]:
    """Strategy, budget and the most telling columns that fit; a blank line between budgets."""
    data = [row.as_dict() for row in rows]
    columns = [
        Column("strategy", [r.strategy for r in rows], 0, right=False),
        Column("budget", [r.budget for r in rows], 0, right=False),
        *(
            Column(header, [number(d[key], pattern) for d in data], rank)
            for rank, (key, (header, pattern)) in enumerate(COMPACT.items(), start=1)
        ),
    ]
    if failures:
        columns.append(Column("failed\nruns", [str(r.failed) for r in rows], 0))
    breaks = [n + 1 < len(rows) and rows[n + 1].budget != row.budget for n, row in enumerate(rows)]
    return fitted("every strategy at every budget", columns, width, breaks)


def frontier_table(rows: Sequence[FrontierRow], width: int) -> tuple[Table, list[str]]:
    """Each strategy unbounded against the window-N frontier at its own tokens; `n/a` for a baseline and
    for a strategy whose every context was the full history (it selected nothing)."""
    verdicts = ["n/a" if r.verdict_holds is None else "holds" if r.holds else "no" for r in rows]
    columns = [
        Column("strategy", [r.strategy for r in rows], 0, right=False),
        Column("recall", [f"{r.recall:.3f}" for r in rows], 0),
        Column("tokens", [f"{r.tokens:,.0f}" for r in rows], 0),
        Column("margin", [f"{r.margin:+.3f}" for r in rows], 0),
        Column("95% CI", [f"{r.low:+.3f},{r.high:+.3f}" for r in rows], 2),
        Column("target", [f"{r.target:+.3f}" for r in rows], 1),
        Column("verdict", verdicts, 0, right=False),
        *(  # by distance of the evidence; the longest range (10+) kept first
            Column(b, [number(r.buckets[b], "{:.2f}") for r in rows], 3 + len(BUCKETS) - i)
            for i, b in enumerate(BUCKETS)
        ),
    ]
    return fitted("against the recency frontier (window-N at the same tokens), no budget", columns, width)
