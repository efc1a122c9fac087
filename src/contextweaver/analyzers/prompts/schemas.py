"""JSON schemas of the memory model's replies. Their `title` names the request (the fake model reads it)."""

from __future__ import annotations

from typing import Any

PARENT_ITEM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "confidence": {"type": "number"},
        "reasoning": {"type": "string"},
    },
    "required": ["id", "confidence", "reasoning"],
}


def parents_schema(m: int) -> dict[str, Any]:
    return {
        "title": "parent_selection",
        "type": "object",
        "properties": {"parents": {"type": "array", "items": PARENT_ITEM, "minItems": 1, "maxItems": m}},
        "required": ["parents"],
    }


def summary_schema() -> dict[str, Any]:
    return {
        "title": "node_summary",
        "type": "object",
        "properties": {"summary": {"type": "string"}},
        "required": ["summary"],
    }


def dependency_schema() -> dict[str, Any]:
    return {
        "title": "dependency_summary",
        "type": "object",
        "properties": {"dependency_summary": {"type": "string"}},
        "required": ["dependency_summary"],
    }


def annotation_schema(m: int) -> dict[str, Any]:
    return {
        "title": "step_annotation",
        "type": "object",
        "properties": {
            "summary": {"type": "string"},
            "parents": {"type": "array", "items": PARENT_ITEM, "minItems": 1, "maxItems": m},
            "dependency_summary": {"type": "string"},
        },
        "required": ["summary", "parents", "dependency_summary"],
    }
