"""Rows of the store's queries turned into records: session headers and stored steps with their nodes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from contextweaver.nodes.graph import LabelRecord
from contextweaver.records import Parent, ValidationStatus
from contextweaver.store.base import SessionInfo, StoredAnnotation, StoredStep, step_from_row
from contextweaver.store.nodes import StoredNode

SHOWN_WIRES = ("anthropic", "responses")
"""Wires a proxy session is shown as (store/requests.py: SESSION_COLUMNS); chat is `openai` already."""


def session_info(row: dict[str, Any]) -> SessionInfo:
    return SessionInfo(
        id=str(row["id"]),
        root=json.loads(row["root"]),
        root_digest=str(row["root_digest"]),
        config=json.loads(row["config"]),
        created_at=float(row["created_at"]),
        updated_at=float(row["updated_at"]),
        steps=int(row["steps"]),
        conversation_key=row["conversation_key"],
        format=row.get("wire")
        if row.get("wire") in SHOWN_WIRES and row["format"] in (None, "openai")
        else row["format"],
        meta=json.loads(row["meta"]),
        owner=row.get("owner"),
    )


def assemble(
    rows: list[dict[str, Any]], edges: list[dict[str, Any]], labels: list[dict[str, Any]]
) -> list[StoredStep]:
    parents: dict[int, list[Parent]] = {}
    for edge in edges:
        parents.setdefault(int(edge["child"]), []).append(
            Parent(int(edge["parent"]), float(edge["confidence"]), str(edge["reason"]))
        )
    given: dict[int, list[LabelRecord]] = {}
    for label in labels:
        by = int(label["by_idx"])
        given.setdefault(by, []).append(
            LabelRecord(int(label["idx"]), ValidationStatus(label["status"]), by, str(label["reason"]))
        )
    out = []
    for row in rows:
        index = int(row["idx"])
        annotation = None
        if row["node_idx"] is not None:
            annotation = StoredAnnotation(
                summary=str(row["summary"]),
                dependency_summary=str(row["dependency_summary"]),
                parents=tuple(parents.get(index, ())),
                validation_status=str(row["validation_status"]),
                labels=tuple(given.get(index, ())),
            )
        computed = StoredNode.from_columns(row) if annotation is not None else None
        out.append(StoredStep(index, step_from_row(row), str(row["digest"]), annotation, computed))
    return out


def rows_of(cursor: Any) -> Iterator[dict[str, Any]]:
    """Rows of a DB-API cursor as dicts (column name -> value)."""
    if cursor.description is None:
        return iter(())
    names = [d[0] for d in cursor.description]
    return (dict(zip(names, row, strict=True)) for row in cursor.fetchall())
