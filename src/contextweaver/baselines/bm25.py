"""BM25 retrieval baseline: the latest step plus the k earlier steps whose text is most similar to it.

A lexical-retrieval memory as RAG-style agents use it: no graph, no LLM. Each step is tokenized once
(identifiers, paths and their parts); the `bm25s` index over the earlier steps is rebuilt from the
cached token ids, so a step costs one sparse build plus one query, never a re-tokenization.
"""

from __future__ import annotations

import logging

from contextweaver.baselines.base import HistoryStrategy
from contextweaver.nodes.recall_query import terms
from contextweaver.records import Node, Step
from contextweaver.weaving.plan import NewestFirst, Plan

MAX_QUERY_TERMS = 400
"""The query's distinct terms (a giant observation's head): one dump cannot dominate it. Terms are recall's
(`nodes/recall_query.terms`): identifiers, paths and their parts."""


class BM25Retrieval(HistoryStrategy):
    """Keeps the current step and the top-k earlier steps by BM25 similarity to it, in full."""

    name = "bm25"

    def __init__(self, k: int = 5) -> None:
        import bm25s  # the `eval` extra: the class (and `uses_model`) can be read without it

        super().__init__()
        self._bm25s = bm25s
        self.k = k
        self._vocab: dict[str, int] = {}
        self._docs: list[list[int]] = []  # token ids of step i at position i - 1
        self._query: list[int] = []
        self._ranked: list[tuple[int, float]] | None = (
            None  # per latest step; contexts at several budgets share it
        )
        logging.getLogger("bm25s").setLevel(logging.WARNING)

    def add_step(self, step: Step) -> Node:
        node = super().add_step(step)
        ids = [self._vocab.setdefault(t, len(self._vocab)) for t in terms(_step_text(step))]
        self._docs.append(ids)
        self._query = list(dict.fromkeys(ids))[:MAX_QUERY_TERMS]
        self._ranked = None
        return node

    def ranked(self) -> list[tuple[int, float]]:
        """Earlier steps by BM25 score against the latest step, best first (ties: the newer step)."""
        if self._ranked is None:
            self._ranked = self._rank()
        return self._ranked

    def _rank(self) -> list[tuple[int, float]]:
        earlier = self._docs[:-1]
        if not earlier or not self._query:
            return []
        retriever = self._bm25s.BM25()
        vocab = dict(self._vocab)
        retriever.index((earlier, vocab), show_progress=False)
        scores = retriever.get_scores(self._query)
        order = sorted(range(len(earlier)), key=lambda i: (-float(scores[i]), -i))
        return [(i + 1, float(scores[i])) for i in order if scores[i] > 0]

    def plan(self) -> Plan:
        last = len(self.nodes) - 1
        if last <= self.k + 1:
            reason = f"warmup: at most k+1={self.k + 1} steps"
            return Plan(full=NewestFirst(last, reason), compressed_reason=reason)
        full = [(last, "current step")]
        for index, score in self.ranked()[: self.k]:
            full.append((index, f"BM25 match to step {last} (score {score:.1f})"))
        return Plan(full=full, compressed_reason=f"not among the top {self.k} BM25 matches of step {last}")


def _step_text(step: Step) -> str:
    return f"{step.thought}\n{step.action}\n{step.observation}"
