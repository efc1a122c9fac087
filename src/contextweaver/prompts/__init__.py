"""Prompts, reply schemas and tolerant reply parsing shared by the LLM analyzers, the LLM summarizer, the fused annotator and the LLM-summary baseline."""

from contextweaver.prompts.ask import STAT_KEYS, ask_json, bump, fallback_cause, new_stats
from contextweaver.prompts.messages import (
    annotation_messages,
    dependency_messages,
    parent_messages,
    summary_messages,
)
from contextweaver.prompts.parse import ReplyError, extract_json, parse_parents, parse_text
from contextweaver.prompts.schemas import (
    annotation_schema,
    dependency_schema,
    parents_schema,
    summary_schema,
)

__all__ = [
    "STAT_KEYS",
    "ReplyError",
    "annotation_messages",
    "annotation_schema",
    "ask_json",
    "bump",
    "dependency_messages",
    "dependency_schema",
    "extract_json",
    "fallback_cause",
    "new_stats",
    "parent_messages",
    "parents_schema",
    "parse_parents",
    "parse_text",
    "summary_messages",
    "summary_schema",
]
