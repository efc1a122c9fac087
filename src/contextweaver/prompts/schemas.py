"""JSON schemas of the memory model's replies. Their `title` names the request (the fake model reads it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def parent_item(ids: Sequence[str] = ()) -> dict[str, Any]:
    """One chosen parent. With `ids`, the id is an enum: grammar-constrained servers (llama.cpp, vLLM,
    OpenAI strict mode) then cannot invent an id."""
    id_schema: dict[str, Any] = {"type": "string", "enum": list(ids)} if ids else {"type": "string"}
    return {
        "type": "object",
        "properties": {"id": id_schema, "confidence": {"type": "number"}, "reasoning": {"type": "string"}},
        "required": ["id", "confidence", "reasoning"],
    }


def parents_schema(m: int, ids: Sequence[str] = ()) -> dict[str, Any]:
    return {
        "title": "parent_selection",
        "type": "object",
        "properties": {"parents": {"type": "array", "items": parent_item(ids), "minItems": 1, "maxItems": m}},
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


def annotation_schema(m: int, ids: Sequence[str] = ()) -> dict[str, Any]:
    return {
        "title": "step_annotation",
        "type": "object",
        "properties": {
            "summary": {"type": "string"},
            "parents": {"type": "array", "items": parent_item(ids), "minItems": 1, "maxItems": m},
            "dependency_summary": {"type": "string"},
        },
        "required": ["summary", "parents", "dependency_summary"],
    }
