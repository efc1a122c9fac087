"""Zero-LLM parent selection from information flow: what the new step uses that an earlier step produced.

Signals, strongest first: items the new thought/action takes from an earlier output (weighted by
rarity), editing a file an earlier step viewed, running code after an edit, returning to an earlier
step's files and symbols, re-running a command; recency is only a weak prior. Postings are
indexed once per node, so the cost per step does not grow with the history.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from contextweaver.config import WeaverConfig
from contextweaver.nodes.postings import Posting, post
from contextweaver.protocols import Model
from contextweaver.records import Node, Parent

if TYPE_CHECKING:
    from contextweaver.nodes.graph import DependencyGraph

USES_OUTPUT, RETURNS_TO, SEES_AGAIN = 2.0, 0.2, 0.25
EDITS_VIEWED, EDITS_AGAIN, VIEWS_EDIT, RUNS_AFTER_EDIT, RERUNS = 3.0, 1.5, 2.0, 2.0, 1.0
RECENCY = (0.6, 0.3, 0.15)
MAX_POSTINGS = 8  # newest postings of an item that are scored
MAX_OBSERVED = 300  # observed items of the new step used as weak signals
KEEP_FRACTION = 0.3
SIZE_EXPONENT = 0.5  # bigger outputs match more items by chance: divide by (output tokens / SIZE_UNIT) ** e
SIZE_UNIT = 1000  # a parent must score at least this share of the best one
_Add = Callable[[int, float, str], None]
_RUNS = re.compile(
    r"\b(?:python\d?|pytest|tox|nox|go test|cargo|npm|yarn|pnpm|jest|mocha|mvn|gradle|make|node|bin/test|runtests)\b"
)


def _confidence(score: float) -> float:
    return round(score / (score + 3.0), 3)


class HeuristicAnalyzer:
    """Scores candidates from shared evidence; returns the top m with a confidence and a reason."""

    name = "heuristic"
    uses_model = False

    def __init__(self, config: WeaverConfig | None = None, model: Model | None = None) -> None:
        self.stats: dict[str, int] = {"calls": 0}
        self._indexed = 0
        self._observed: dict[str, Posting] = {}
        self._said: dict[str, Posting] = {}
        self._viewed: dict[str, list[int]] = defaultdict(list)
        self._edited: dict[str, list[int]] = defaultdict(list)
        self._commands: dict[str, int] = {}
        self._last_edit: tuple[int, str] | None = None
        self._last_run = -1

    def select_parents(
        self, node: Node, candidates: Sequence[Node], graph: DependencyGraph, task: str, m: int
    ) -> list[Parent]:
        self.stats["calls"] += 1
        ranked, why = self._scores(node, candidates, graph)
        if not ranked:
            previous = node.index - 1
            allowed = self._allowed(candidates)
            fallback = previous if allowed(previous) else 0
            return [Parent(fallback, 0.1, "no shared evidence: follows the previous step")]
        floor = _confidence(ranked[0][1]) * KEEP_FRACTION
        parents: list[Parent] = []
        for i, score in ranked:  # only the parents kept are built (a step scores dozens of candidates)
            if len(parents) >= m:
                break
            if (confidence := _confidence(score)) >= floor:
                parents.append(Parent(i, confidence, "; ".join(why[i])))
        return parents

    def rank(self, node: Node, candidates: Sequence[Node], graph: DependencyGraph) -> list[Parent]:
        """Every candidate with a positive score, best first."""
        ranked, why = self._scores(node, candidates, graph)
        return [Parent(i, _confidence(s), "; ".join(why[i])) for i, s in ranked]

    def _scores(
        self, node: Node, candidates: Sequence[Node], graph: DependencyGraph
    ) -> tuple[list[tuple[int, float]], dict[int, list[str]]]:
        """(candidate, score) best first, and each candidate's first three reasons."""
        self._index_until(graph, node.index)
        allowed = self._allowed(candidates)
        scores: dict[int, float] = defaultdict(float)
        why: dict[int, list[str]] = defaultdict(list)

        def add(index: int, weight: float, reason: str, item: str | None = None) -> None:
            """`reason` is a template of `item` when one is given: formatted only while it is shown."""
            if weight > 0 and allowed(index):
                scores[index] += weight
                reasons = why[index]
                if len(reasons) < 3:
                    text = reason if item is None else reason.format(item)
                    if text not in reasons:
                        reasons.append(text)

        k, facts = node.index, node.facts
        for item in sorted(facts.symbols):
            for postings, weight, verb in (
                (self._observed, USES_OUTPUT, "uses `{}`"),
                (self._said, RETURNS_TO, "returns to `{}`"),
            ):
                hits = postings.get(item)
                if hits and len(hits) <= max(2, k // 2):
                    idf = math.log(1 + k / len(hits))
                    for i in hits[-MAX_POSTINGS:]:
                        add(i, weight * idf, verb, item)
        rare = max(2, k // 4)
        for item in sorted(facts.observed)[:MAX_OBSERVED]:
            hits = self._observed.get(item)
            if hits and len(hits) <= rare:
                add(hits[-1], SEES_AGAIN * math.log(1 + k / len(hits)), "output shows `{}` again", item)
        self._file_signals(node, add)
        for distance, weight in enumerate(RECENCY, start=1):
            add(k - distance, weight, "recent step")
        for i in scores:
            found = graph.node(i)
            scores[i] /= max(1.0, (found.full_tokens - found.compressed_tokens) / SIZE_UNIT) ** SIZE_EXPONENT
        return sorted(scores.items(), key=lambda kv: (-kv[1], -kv[0])), why

    def _file_signals(self, node: Node, add: _Add) -> None:
        facts = node.facts
        for path in sorted(facts.edited_files):
            if self._viewed.get(path):
                add(self._viewed[path][-1], EDITS_VIEWED, f"edits {path}, viewed there")
            if self._edited.get(path):
                add(self._edited[path][-1], EDITS_AGAIN, f"edits {path} again")
        for path in sorted(facts.viewed_files):
            if self._edited.get(path):
                add(self._edited[path][-1], VIEWS_EDIT, f"checks the edit of {path}")
        command = facts.commands[0] if facts.commands else ""
        if _RUNS.search(command):
            if self._last_edit and self._last_edit[0] > self._last_run:
                add(self._last_edit[0], RUNS_AFTER_EDIT, f"runs code after the edit of {self._last_edit[1]}")
            if command in self._commands:
                add(self._commands[command], RERUNS, "re-runs the same command")

    @staticmethod
    def _allowed(candidates: Sequence[Node]) -> Callable[[int], bool]:
        """Whether an index is a candidate: O(1) on the graph's lazy view, else a set built once."""
        from contextweaver.nodes.graph import CandidateView

        if isinstance(candidates, CandidateView):
            return candidates.allows
        return {n.index for n in candidates}.__contains__

    def _index_until(self, graph: DependencyGraph, stop: int) -> None:
        """Add postings for nodes not yet indexed (each node exactly once)."""
        for i in range(self._indexed, stop):
            facts = graph.node(i).facts
            post(self._observed, facts.observed, i)
            post(self._said, facts.symbols, i)
            for path in facts.viewed_files:
                self._viewed[path].append(i)
            for path in sorted(facts.edited_files):
                self._edited[path].append(i)
                self._last_edit = (i, path)
            command = facts.commands[0] if facts.commands else ""
            if command:
                self._commands[command] = i
                if _RUNS.search(command):
                    self._last_run = i
        self._indexed = max(self._indexed, stop)
