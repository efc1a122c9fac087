"""What a store holds about its sessions, as plain JSON-ready data (for the API and the CLI)."""

from __future__ import annotations

import json
from typing import Any

from contextweaver.formats.base import Trajectory
from contextweaver.records import WovenContext
from contextweaver.store import Session
from contextweaver.store.base import SessionInfo, Store, StoredStep
from contextweaver.tokens import count_message


def fields(record: object, *names: str) -> dict[str, Any]:
    """The named attributes of a record, as a JSON-ready dict in that order."""
    return {name: getattr(record, name) for name in names}


def session_summary(info: SessionInfo) -> dict[str, Any]:
    return fields(info, "id", "steps", "format", "created_at", "updated_at", "conversation_key")


def session_detail(store: Store, session_id: str) -> dict[str, Any] | None:
    """The session's root, every step with its annotation, the labels each step gave, and its cost with the
    cache misses the provider explained (by reason)."""
    info = store.session(session_id)
    if info is None:
        return None
    misses: dict[str, int] = {}
    for row in store.requests(session_id):
        if row["miss_reason"]:
            misses[row["miss_reason"]] = misses.get(row["miss_reason"], 0) + 1
    cost = {**session_cost(store, session_id), "cache_misses": misses}
    return {**_detail(info, store.steps(session_id)), "cost": cost}


def session_cost(store: Store, session_id: str) -> dict[str, Any]:
    return cost_of(store.request_totals(session_id).get(session_id))


def session_page(
    store: Store, session_id: str, owner: str | None, offset: int, limit: int
) -> dict[str, Any] | None:
    """One page of a session's steps (`offset` steps skipped), or None when `owner` does not own it."""
    info = store.session(session_id)
    if info is None or info.owner != owner:
        return None
    detail = _detail(info, store.steps(session_id, start=offset + 1, limit=limit))
    after = offset + len(detail["nodes"])
    return {**detail, "cost": session_cost(store, session_id), "offset": offset,
            "next_offset": after if after < info.steps else None}  # fmt: skip


def _detail(info: SessionInfo, steps: list[StoredStep]) -> dict[str, Any]:
    nodes = []
    for item in steps:
        node: dict[str, Any] = {
            "index": item.index,
            "kind": item.step.kind,
            "thought": item.step.thought,
            "action": item.step.action,
            "observation_lines": len(item.step.observation.splitlines()),
            "tokens": step_tokens(item),
            "messages": list(item.step.messages),
            "annotated": item.annotation is not None,
        }
        if item.annotation is not None:
            node.update(
                summary=item.annotation.summary,
                dependency_summary=item.annotation.dependency_summary,
                status=item.annotation.validation_status,
                parents=[fields(p, "index", "confidence", "reason") for p in item.annotation.parents],
                labels=[
                    {"index": label.index, "status": str(label.status), "reason": label.reason}
                    for label in item.annotation.labels
                ],
            )
        nodes.append(node)
    return {
        **session_summary(info),
        "root": info.root,
        "config": info.config,
        "meta": info.meta,
        "nodes": nodes,
    }


def step_tokens(item: StoredStep) -> int:
    """The step's size in full: what a cut that drops it leaves out (its decision says 0, what it sends)."""
    if item.computed is not None:
        return item.computed.full_tokens
    return sum(count_message(m) for m in item.step.chat_messages())


def short_owner(owner: str | None) -> str:
    """An owner as the operator's views show it: 8 hex digits of its keyed hash, "none" without one."""
    return owner[:8] if owner else "none"


def stored_budget(meta: dict[str, Any]) -> int | None:
    """The token budget the proxy wove this session's contexts with (meta["budget"]); None for none."""
    budget = meta.get("budget")
    return budget if isinstance(budget, int) and not isinstance(budget, bool) and budget > 0 else None


def woven_at(
    store: Store, session_id: str, step: int | None = None, max_tokens: int | None = None
) -> WovenContext:
    """The context the agent received after step `step` (default: the latest), rebuilt from the store.

    Read-only: the weaver is asked directly, so looking (under any budget) saves no lazy cut that
    the proxy would resume from.
    """
    return Session.open(store, session_id, upto=step).weaver.context(max_tokens)


def replayable(store: Store, session_id: str) -> Trajectory | None:
    """The session as a Trajectory (root, stored steps verbatim), to write as JSON Lines for `replay`."""
    info = store.session(session_id)
    if info is None:
        return None
    steps = [item.step for item in store.steps(session_id)]
    meta = {"session": info.id, "format": info.format, "session_meta": info.meta}
    return Trajectory(
        root=list(info.root), steps=steps, source=f"{store.url}#{info.id}", format="jsonl", meta=meta
    )


def context_detail(context: WovenContext) -> dict[str, Any]:
    return {
        **fields(context, "strategy", "tokens", "full_history_tokens", "budget", "test_status", "notes"),
        "decisions": [fields(d, "index", "mode", "reason", "tokens") for d in context.decisions],
        "messages": context.messages,
    }


COST_FIELDS = ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens")


def cost_of(totals: dict[str, Any] | None) -> dict[str, Any]:
    """A session's (or several sessions') measured bill and the pass-through estimate, in base-price input
    tokens (serve/metering.py says how each is computed); the saving is their difference."""
    totals = totals or {}
    billed, passthrough = float(totals.get("billed") or 0), float(totals.get("passthrough") or 0)
    return {
        "requests": int(totals.get("requests") or 0),
        "usage_reported": int(totals.get("reported") or 0),
        **{name: int(totals.get(name) or 0) for name in COST_FIELDS},
        "billed": round(billed, 1),
        "passthrough": round(passthrough, 1),
        "saved": round(passthrough - billed, 1),
        "saved_share": round((passthrough - billed) / passthrough, 4) if passthrough else 0.0,
        "cuts": int(totals.get("cuts") or 0),
        "sent_tokens": int(totals.get("sent_tokens") or 0),
        "full_tokens": int(totals.get("full_tokens") or 0),
    }


def money(cost: dict[str, Any]) -> list[str]:
    """Billed, pass-through and saved as printed and shown (dashboard.js writes the same text): one
    decimal, so no figure sits on a rounding tie that two languages would break differently."""
    if not cost["usage_reported"]:
        return ["-", "-", "-"]
    return [f"{cost['billed']:,.1f}", f"{cost['passthrough']:,.1f}",
            f"{cost['saved']:,.1f} ({cost['saved_share'] * 100:.2f}%)"]  # fmt: skip


def summed(costs: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals over several sessions' `cost_of` records."""
    names = ("requests", "cuts", "billed", "passthrough", "sent_tokens", "full_tokens", *COST_FIELDS)
    totals: dict[str, Any] = {name: sum(cost[name] for cost in costs) for name in names}
    totals["reported"] = sum(cost["usage_reported"] for cost in costs)
    return cost_of(totals)


def request_row(row: dict[str, Any]) -> dict[str, Any]:
    """A stored request, JSON-ready: its cut (note, what was left out and why) parsed."""
    view = dict(row)
    view["streamed"] = bool(view["streamed"])
    view["cut"] = json.loads(view["cut"]) if view.get("cut") else None
    return view


def passed_page(store: Store, owner: str | None, after: int, limit: int) -> dict[str, Any]:
    """One owner's requests forwarded outside any session after id `after`, and their cost (what the
    proxy measured of them; passed through, they cost what they would have cost whole)."""
    rows = [{**row, "owner": short_owner(row["owner"]), "streamed": bool(row["streamed"])}
            for row in store.passed_requests(owner, after, limit)]  # fmt: skip
    return {
        "cost": cost_of(store.owner_passed_totals(owner)),
        "requests": rows,
        "next_after": rows[-1]["id"] if len(rows) == limit else None,
    }


def session_requests(
    store: Store, session_id: str, owner: str | None, after: int, limit: int
) -> dict[str, Any] | None:
    """The session's cost and its requests after id `after`, or None when `owner` does not own it."""
    info = store.session(session_id)
    if info is None or info.owner != owner:
        return None
    rows = [request_row(row) for row in store.requests(session_id, after, limit)]
    return {
        "id": session_id,
        "steps": info.steps,
        "cost": session_cost(store, session_id),
        "requests": rows,
        "next_after": rows[-1]["id"] if len(rows) == limit else None,
    }
