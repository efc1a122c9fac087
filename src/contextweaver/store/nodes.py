"""What node extraction and validation computed from a step, in the columns a store keeps it in, and the
memory's annotation of it as stored.

Facts, token counts, the placeholder text of each observation and the parsed test results are all
derived from the raw step once, when the step is added. Storing them lets a session reopen by
reading rows, never re-running the extractors, the tokenizer or the test parsers on its history.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from contextweaver.nodes.graph import LabelRecord
from contextweaver.nodes.render import is_observation, placeholders, with_placeholders
from contextweaver.records import Facts, Node, Parent, Step, TestStatus, ValidationStatus
from contextweaver.store.encoding import canonical, ordered

FACT_SETS = (
    "files", "symbols", "observed", "errors", "tests", "edited_files", "viewed_files", "deleted_files",
    "reverted_files",
)  # fmt: skip
"""Fact sets are stored one item a line (a JSON list when an item holds a line break): fast to read."""


@dataclass(frozen=True)
class StoredAnnotation:
    """The memory's work on one step, as stored: enough to rebuild the node without the analyzer."""

    summary: str
    dependency_summary: str
    parents: tuple[Parent, ...]
    validation_status: str
    labels: tuple[LabelRecord, ...] = ()


@dataclass(frozen=True)
class StoredNode:
    """A node's computed fields as stored (None in rows written before they were stored)."""

    facts: Facts
    full_tokens: int
    compressed_tokens: int
    placeholders: tuple[str, ...]
    test_results: dict[str, TestStatus]
    inferred_passes: tuple[str, ...]
    runner: str

    @classmethod
    def of(cls, node: Node) -> StoredNode:
        return cls(
            facts=node.facts,
            full_tokens=node.full_tokens,
            compressed_tokens=node.compressed_tokens,
            placeholders=tuple(placeholders(node)),
            test_results=dict(node.test_results),
            inferred_passes=node.inferred_passes,
            runner=node.runner,
        )

    def node(self, index: int, step: Step, annotation: StoredAnnotation) -> Node:
        """The node as `add_step` left it: computed fields from here, the memory's work from `annotation`."""
        if len(self.placeholders) != sum(1 for m in step.chat_messages() if is_observation(step, m)):
            raise ValueError(f"step {index}: the stored placeholders do not match its observation messages")
        node = Node(
            index=index,
            step=step,
            summary=annotation.summary,
            dependency_summary=annotation.dependency_summary,
            parents=annotation.parents,
            facts=self.facts,
            test_results=dict(self.test_results),
            inferred_passes=self.inferred_passes,
            runner=self.runner,
            validation_status=ValidationStatus(annotation.validation_status),
            full_tokens=self.full_tokens,
            compressed_tokens=self.compressed_tokens,
        )
        node.compressed = with_placeholders(step, self.placeholders)
        return node

    def columns(self) -> dict[str, Any]:
        """The cw_nodes columns (JSON text, sorted so equal nodes store equal rows)."""
        facts = {name: _joined(sorted(getattr(self.facts, name))) for name in FACT_SETS}
        facts["commands"] = _joined(list(self.facts.commands))
        tests = {"results": {k: str(v) for k, v in self.test_results.items()},
                 "inferred": list(self.inferred_passes), "runner": self.runner}  # fmt: skip
        return {
            "full_tokens": self.full_tokens,
            "compressed_tokens": self.compressed_tokens,
            "facts": canonical(facts),
            "tests": json.dumps(tests, ensure_ascii=False, separators=(",", ":")),  # keeps the run's order
            "placeholders": ordered(list(self.placeholders)),
        }

    @classmethod
    def from_columns(cls, row: dict[str, Any]) -> StoredNode | None:
        if row.get("facts") is None:
            return None
        facts = json.loads(row["facts"])
        tests = json.loads(row["tests"])
        return cls(
            facts=Facts(
                **{
                    name: frozenset(_lines(facts.get(name, ""))) for name in FACT_SETS
                },  # older rows lack some
                commands=tuple(_lines(facts["commands"])),
            ),  # fmt: skip
            full_tokens=int(row["full_tokens"]),
            compressed_tokens=int(row["compressed_tokens"]),
            placeholders=tuple(json.loads(row["placeholders"])),
            test_results={k: TestStatus(v) for k, v in tests["results"].items()},
            inferred_passes=tuple(tests["inferred"]),
            runner=str(tests["runner"]),
        )


def _joined(items: list[str]) -> str | list[str]:
    return items if any("\n" in item for item in items) else "\n".join(items)


def _lines(value: str | list[str]) -> list[str]:
    if isinstance(value, list):
        return value
    return value.split("\n") if value else []
