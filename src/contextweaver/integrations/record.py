"""What an integration saves beside the agent's own trajectory: the graph and every woven context.

The trajectory file stays the agent's: the full, unwoven history. Beside `<name>.traj.json` go
`<name>.contextweaver.json` (nodes, parents with confidence and reason, labels, test status, the
memory's own cost) and `<name>.contexts.jsonl` (one line per model query: which steps were kept,
compressed or dropped and why, the tokens, and the messages sent as references to the trajectory's
messages plus what was cut; see `contexts.py`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from contextweaver.integrations.contexts import FORMAT as CONTEXTS_FORMAT
from contextweaver.integrations.contexts import ContextEncoder, Source
from contextweaver.protocols import Strategy
from contextweaver.records import Node, WovenContext

GRAPH_FORMAT = "contextweaver-graph-1"


def sidecar_paths(trajectory: str | Path) -> tuple[Path, Path]:
    """(graph JSON, contexts JSONL) next to a trajectory file, named after it."""
    path = Path(trajectory)
    stem = path.name
    for suffix in (".traj.json", ".traj", ".json"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    return path.with_name(f"{stem}.contextweaver.json"), path.with_name(f"{stem}.contexts.jsonl")


def context_record(query: int, context: WovenContext, seconds: float) -> dict[str, Any]:
    """One model query's context in brief: tokens, budget, status line, notes (no messages)."""
    return {
        "query": query,
        "strategy": context.strategy,
        "tokens": context.tokens,
        "full_history_tokens": context.full_history_tokens,
        "budget": context.budget,
        "test_status": context.test_status,
        "notes": list(context.notes),
        "weave_seconds": round(seconds, 6),
    }


def strategy_nodes(strategy: Strategy | None) -> list[Node]:
    """The nodes a strategy holds, root first."""
    return list(strategy.nodes) if strategy is not None else []


def node_record(node: Node) -> dict[str, Any]:
    return {
        "index": node.index,
        "kind": node.step.kind,
        "message_index": node.step.meta.get("message_index"),
        "action": node.step.action,
        "summary": node.summary,
        "dependency_summary": node.dependency_summary,
        "parents": [asdict(p) for p in node.parents],
        "validation_status": str(node.validation_status),
        "superseded_by": node.superseded_by,
        "test_results": {test: str(status) for test, status in node.test_results.items()},
        "full_tokens": node.full_tokens,
        "compressed_tokens": node.compressed_tokens,
    }


def graph_document(
    strategy: Strategy | None, settings: dict[str, Any], stats: dict[str, Any]
) -> dict[str, Any]:
    """The graph as JSON: nodes with parents and reasons, label records, the TEST STATUS line, costs."""
    nodes = strategy_nodes(strategy)
    graph = getattr(strategy, "graph", None)
    tracker = getattr(strategy, "tracker", None)
    return {
        "format": GRAPH_FORMAT,
        "strategy": settings.get("strategy") or getattr(strategy, "name", None),
        "settings": settings,
        "root_tokens": nodes[0].full_tokens if nodes else 0,
        "nodes": [node_record(n) for n in nodes[1:]],
        "labels": [
            {"index": r.index, "status": str(r.status), "by": r.by, "reason": r.reason}
            for r in (graph.labels if graph is not None else [])
        ],
        "test_status": tracker.status_line() if tracker is not None else None,
        "stats": stats,
    }


class ContextLog:
    """Context records of one run: brief summaries in memory, encoded records appended to a JSONL."""

    def __init__(self, *, with_messages: bool = True) -> None:
        self.with_messages = with_messages
        self.summaries: list[dict[str, Any]] = []
        self._encoder = ContextEncoder()
        self._pending: list[dict[str, Any]] = []
        self._started: set[Path] = set()

    def reset(self) -> None:
        self.summaries.clear()
        self._encoder.reset()
        self._pending.clear()
        self._started.clear()

    def add(self, context: WovenContext, seconds: float, sources: Sequence[Source]) -> None:
        """Record one context; `sources` are the messages it can reference (see ChatFeed.sources)."""
        record = context_record(len(self.summaries) + 1, context, seconds)
        self.summaries.append(record)
        self._pending.extend(self._encoder.encode(context, sources if self.with_messages else (), record))
        if not self.with_messages:
            self._pending[-1].pop("messages")

    def flush(self, path: Path) -> None:
        """Append the lines not yet written (the file is started anew on the run's first flush)."""
        first = path not in self._started
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w" if first else "a", encoding="utf-8") as out:
            if first:
                out.write(json.dumps({"format": CONTEXTS_FORMAT}) + "\n")
            for line in self._pending:
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
        self._started.add(path)
        self._pending.clear()

    def drop_pending(self) -> None:
        """Forget unwritten records (nobody will save them): keeps memory flat for hook-only use.

        The encoder forgets too, so nothing written later refers to a definition never written."""
        self._pending.clear()
        self._encoder.reset()
