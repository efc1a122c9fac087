"""`contextweaver sessions`: list, show and export the sessions of a store (SQLite file or PostgreSQL).

A store that fails while it is read (a damaged SQLite page, a lost server) and an --out file that
cannot be written (a missing directory, a full disk) end in one line naming the file and what to do,
and exit 1, not in a traceback (issue 44). A reader that closes stdout early (`| head -1`) ends the command
quietly with 141, as the closed pipe ends any shell command (issue 53)."""

from __future__ import annotations

import errno
import functools
import json
import os
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, NoReturn, TypeVar

import click

from contextweaver.cli.options import TokenBudget

F = TypeVar("F", bound=Callable[..., Any])
CLOSED_PIPE_EXIT = 141
"""128 + SIGPIPE: the status a shell gives a command stopped by a reader that closed the pipe."""
WRITE_HINTS = {errno.ENOENT: "create its directory first", errno.ENOSPC: "the disk is full: free space or "
               "write elsewhere", errno.EROFS: "the filesystem is read-only: write elsewhere",
               errno.EACCES: "write where you have permission"}  # fmt: skip

STORE_OPTION = click.option(
    "--store", "store_location", envvar="CONTEXTWEAVER_STORE", default="contextweaver-sessions.db",
    show_default=True, help="SQLite file, or a postgresql:// DSN.",
)  # fmt: skip


def _failures(command: F) -> F:
    """`command`, whose store and --out failures end in one clear line (click prints it, exit code 1)."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except BrokenPipeError:
            _closed_pipe()
        except OSError as exc:
            hint = WRITE_HINTS.get(exc.errno or 0, "check the path")
            raise click.ClickException(
                f"cannot write {exc.filename or kwargs.get('out')}: {exc.strerror}; {hint}"
            ) from None
        except Exception as exc:
            if not type(exc).__module__.startswith(("sqlite3", "psycopg")):
                raise
            location = kwargs.get("store_location")
            hint = ("the file is damaged: restore it from a backup, or recover what is readable with "
                    f"`sqlite3 {location} .recover`" if "malformed" in str(exc) or "not a database" in str(exc)
                    else "check the store and that its database is reachable")  # fmt: skip
            raise click.ClickException(f"reading the store {location} failed: {exc}; {hint}") from None

    return run  # type: ignore[return-value]


def _closed_pipe() -> NoReturn:
    """Exit quietly with CLOSED_PIPE_EXIT; stdout goes to /dev/null first, so that the interpreter's last flush
    of what is still buffered prints no error of its own."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    raise SystemExit(CLOSED_PIPE_EXIT)


def _open(store_location: str) -> Any:
    from pathlib import Path

    from contextweaver.store import open_store

    if "://" not in store_location and not Path(store_location).exists():
        raise click.UsageError(f"no store at {store_location}: pass --store FILE (or a postgresql:// DSN)")
    return open_store(store_location)


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M:%S")


def _emit(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


@click.group("sessions")
def command() -> None:
    """Inspect the sessions a `contextweaver serve` proxy (or the Session API) stored."""


@command.command("list")
@STORE_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@_failures
def list_sessions(store_location: str, as_json: bool) -> None:
    """Every session with its step count and last update; then, per owner, the requests the proxy forwarded
    outside any session (`sessions passed` lists them)."""
    from rich.console import Console
    from rich.table import Table

    from contextweaver.serve.ledger.inspect import cost_of, session_summary, short_owner, summed

    store = _open(store_location)
    infos, totals, outside = store.sessions(), store.request_totals(), store.passed_totals()
    costs = {info.id: cost_of(totals.get(info.id)) for info in infos}
    if as_json:
        _emit([{**session_summary(info), "cost": costs[info.id]} for info in infos])
        return
    # the id is what `sessions show ID` needs: never cut; the other columns wrap to make room
    table = Table(box=None, padding=(0, 1, 0, 0), pad_edge=False)
    table.add_column("session", no_wrap=True, min_width=max((len(info.id) for info in infos), default=7))
    table.add_column("steps", justify="right", overflow="fold")
    table.add_column("format", overflow="fold")
    for header in ("created\n(UTC)", "updated\n(UTC)"):
        table.add_column(header, overflow="fold", min_width=10)  # a date whole, its time below it
    for header in ("billed", "pass-\nthrough", "saved"):
        table.add_column(header, justify="right", overflow="fold")
    for info in infos:
        cost = costs[info.id]
        table.add_row(info.id, str(info.steps), info.format or "-", _when(info.created_at),
                      _when(info.updated_at), *_money(cost))  # fmt: skip
    passed = {owner: cost_of(one) for owner, one in outside.items()}
    for owner, cost in passed.items():
        table.add_row(f"outside sessions ({short_owner(owner)})", "-", "-", "", _when(outside[owner]["last_at"]),
                      *_money(cost))  # fmt: skip
    total = summed([*costs.values(), *passed.values()])
    table.add_row("total", "", "", "", "", *_money(total))
    console = Console()
    console.on_broken_pipe = _closed_pipe  # type: ignore[method-assign]  # rich's own handler exits 1
    console.print(table)
    console.print("billed, pass-through, saved: input tokens at the base price (cache reads and writes at their "
                  "multipliers); pass-through estimates the same requests sent whole", highlight=False)  # fmt: skip


def _money(cost: dict[str, Any]) -> list[str]:
    """Billed, pass-through and saved in whole tokens (`237,453`, not `237,453.0`: cache reads at a tenth of
    the price make fractions no one reads), the saving's share beside it; `-` without the provider's usage."""
    if not cost["usage_reported"]:
        return ["-", "-", "-"]
    return [f"{cost['billed']:,.0f}", f"{cost['passthrough']:,.0f}",
            f"{cost['saved']:,.0f} ({cost['saved_share'] * 100:.2f}%)"]  # fmt: skip


def _cost_lines(cost: dict[str, Any]) -> list[str]:
    """The session's measured bill, in words (`sessions show`)."""
    if not cost["requests"]:
        return ["cost: no forwarded request recorded"]
    lines = [f"requests: {cost['requests']} forwarded, {cost['usage_reported']} with the provider's usage, "
             f"{cost['cuts']} cuts; {cost['sent_tokens']:,} of {cost['full_tokens']:,} history tokens sent"]  # fmt: skip
    if cost["usage_reported"]:
        billed, passthrough, saved = _money(cost)
        lines += [
            f"billed (provider's usage): input {cost['input_tokens']:,}, cache read {cost['cache_read_tokens']:,}, "
            f"cache write {cost['cache_write_tokens']:,}, output {cost['output_tokens']:,} tokens",
            f"input cost, base-price tokens: billed {billed}, passed through whole (estimate) {passthrough}, "
            f"saved {saved}",
        ]  # fmt: skip
    misses = cost.get("cache_misses") or {}
    if misses:
        lines.append(
            "cache misses the provider explained: " + ", ".join(f"{r} x{n}" for r, n in misses.items())
        )
    return lines


@command.command("passed")
@STORE_OPTION
@_failures
def passed(store_location: str) -> None:
    """The requests a proxy forwarded outside any session, per owner, as JSON: passed through as sent
    (`reason`: compaction, previous_response_id) or before their conversation had a step (no-step-yet),
    each with the usage its answer reported or why there is none."""
    from contextweaver.serve.ledger.inspect import passed_page, short_owner

    store = _open(store_location)
    _emit({short_owner(owner): passed_page(store, owner, 0, 2**62) for owner in store.passed_totals()})


@command.command("show")
@STORE_OPTION
@click.argument("session_id")
@click.option("--step", type=int, help="Show the woven context the agent got after this step.")
@click.option("--latest", is_flag=True, help="Show the woven context after the latest step.")
@click.option(
    "--budget",
    type=TokenBudget(),
    help="Token budget for the shown context (8000, 8k) [default: the proxy's, meta budget].",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@_failures
def show(store_location: str, session_id: str, step: int | None, latest: bool, budget: int | None,
         as_json: bool) -> None:  # fmt: skip
    """The graph (parents, status, summary per step) and labels; or the woven context of a step."""
    from contextweaver.serve.ledger.inspect import context_detail, session_detail, stored_budget, woven_at

    store = _open(store_location)
    detail = session_detail(store, session_id)
    if detail is None:
        raise click.ClickException(f"no session {session_id!r} in {store.url}")
    if step is not None or latest:
        if step is not None and not 0 <= step <= detail["steps"]:
            raise click.ClickException(f"session {session_id!r} has steps 0..{detail['steps']}, not {step}")
        stored = stored_budget(detail["meta"])
        used, source = (budget, "--budget") if budget is not None else (stored, "the proxy's")
        context = {
            **context_detail(woven_at(store, session_id, step, used)),
            "budget_from": source if used else None,
        }
        if as_json:
            _emit(context)
            return
        click.echo(f"context after step {detail['steps'] if step is None else step}: {context['tokens']} tokens "
                   f"of {context['full_history_tokens']} ({context['strategy']}), "
                   f"{f'budget {used} ({source})' if used else 'no budget (the proxy stored none)'}")  # fmt: skip
        for decision in context["decisions"]:
            click.echo(
                f"  step {decision['index']:>4}  {decision['mode']:<10} {decision['tokens']:>6}  {decision['reason']}"
            )
        return
    if as_json:
        _emit(detail)
        return
    click.echo(f"session {detail['id']}: {detail['steps']} steps, format {detail['format'] or '-'}")
    for line in _cost_lines(detail["cost"]):
        click.echo(f"  {line}")
    for node in detail["nodes"]:
        parents = ", ".join(f"{p['index']}({p['confidence']:.2f})" for p in node.get("parents", []))
        click.echo(f"  N{node['index']:<4} {node.get('status', 'unannotated'):<11} <- [{parents}]  "
                   f"{node.get('summary', '')[:90]}")  # fmt: skip
        for label in node.get("labels", []):
            click.echo(f"         labels N{label['index']} {label['status']}: {label['reason']}")


@command.command("export")
@STORE_OPTION
@click.argument("session_id")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "json", "messages"]),
    default="jsonl",
    show_default=True,
    help="jsonl: ContextWeaver JSON Lines (root, then one step per line), read by `contextweaver replay` "
    "and `graph`; json: root, steps and annotations; messages: the conversation as OpenAI chat messages.",
)
@click.option("--out", type=click.Path(dir_okay=False, writable=True), help="File to write (default stdout).")
@_failures
def export(store_location: str, session_id: str, fmt: str, out: str | None) -> None:
    """Write a session out, to archive it or to replay it (`contextweaver replay FILE`)."""
    from contextweaver.formats.jsonl import _lines as jsonl_lines
    from contextweaver.serve.ledger.inspect import replayable, session_detail

    store = _open(store_location)
    detail = session_detail(store, session_id)
    trajectory = replayable(store, session_id)
    if detail is None or trajectory is None:
        raise click.ClickException(f"no session {session_id!r} in {store.url}")
    if fmt == "jsonl":
        lines = list(jsonl_lines(trajectory))
        lines[0]["meta"] = trajectory.meta  # the header: the reader keeps it as the run's meta
        text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    else:
        data: Any = detail
        if fmt == "messages":
            data = {
                "messages": [
                    *trajectory.root,
                    *(m for step in trajectory.steps for m in step.chat_messages()),
                ]
            }
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if out is None:
        sys.stdout.write(text)
    else:
        with open(out, "w", encoding="utf-8") as handle:
            handle.write(text)
        click.echo(f"wrote session {session_id} ({detail['steps']} steps) to {out}", err=True)
