"""What a store holds about its sessions, as plain JSON-ready data (for the API and the CLI)."""

from __future__ import annotations

from typing import Any

from contextweaver.formats.base import Trajectory
from contextweaver.records import WovenContext
from contextweaver.store import Session
from contextweaver.store.base import SessionInfo, Store, StoredStep


def fields(record: object, *names: str) -> dict[str, Any]:
    """The named attributes of a record, as a JSON-ready dict in that order."""
    return {name: getattr(record, name) for name in names}


def session_summary(info: SessionInfo) -> dict[str, Any]:
    return fields(info, "id", "steps", "format", "created_at", "updated_at", "conversation_key")


def session_detail(store: Store, session_id: str) -> dict[str, Any] | None:
    """The session's root, every step with its annotation, and the labels each step gave."""
    info = store.session(session_id)
    if info is None:
        return None
    return _detail(info, store.steps(session_id))


def session_page(
    store: Store, session_id: str, owner: str | None, offset: int, limit: int
) -> dict[str, Any] | None:
    """One page of a session's steps (`offset` steps skipped), or None when `owner` does not own it."""
    info = store.session(session_id)
    if info is None or info.owner != owner:
        return None
    detail = _detail(info, store.steps(session_id, start=offset + 1, limit=limit))
    after = offset + len(detail["nodes"])
    return {**detail, "offset": offset, "next_offset": after if after < info.steps else None}


def _detail(info: SessionInfo, steps: list[StoredStep]) -> dict[str, Any]:
    nodes = []
    for item in steps:
        node: dict[str, Any] = {
            "index": item.index,
            "kind": item.step.kind,
            "thought": item.step.thought,
            "action": item.step.action,
            "observation_lines": len(item.step.observation.splitlines()),
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
