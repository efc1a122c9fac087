"""Evidence-per-token selection: a recency floor, then excerpts of the older outputs the work still uses.

1. Floor: the last W outputs stay (a W-window never knows more about the recent past than this).
2. Older outputs are searched for the words the last few steps' thoughts and actions mention (a word
   weighs 1 / log(2 + the outputs holding it), so a rare name counts more than a common one); each
   output offers the lines around its hits (whole lines, at most `excerpt_tokens`), valued by hits per
   token, doubled when the graph makes the output a parent of a recent step. The best offers are
   taken until `extra_tokens` are spent. A word on many lines of one output marks nothing there.
3. Every kept output's lines that recur verbatim in a later kept output are elided (the later one
   holds them), so an older view of a region that a newer view repeats costs only its changed lines.

All of it is deterministic, calls no LLM, and per step reads only the recent steps plus the outputs a
posting list links to their words (the newest `postings` per word), so its cost stays flat as runs grow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from contextweaver.config import WeaverConfig
from contextweaver.excerpts import WORD, Excerpt, OutputLines, build_excerpt, runs_of
from contextweaver.graph import DependencyGraph
from contextweaver.passing_rows import passing_rows
from contextweaver.selectors import warmup_plan
from contextweaver.selectors.plan import Plan


@dataclass(frozen=True)
class Offer:
    index: int
    keep: frozenset[int]
    tokens: int
    value: float
    hits: tuple[str, ...]


class SelectSelector:
    name = "select"
    lookback = 5
    """Steps whose thoughts and actions say what the work is about now."""
    context_lines = 2
    """Lines kept on each side of a hit."""
    crowded = 20
    """A word on more lines than this in one output marks nothing in it."""
    postings = 64
    """Per word, only its newest outputs are searched (keeps the per-step cost flat)."""
    parent_bonus = 1.0
    candidates = 16
    """Only the outputs with the most (weighted) recent words are cut into offers: a bounded cost."""
    min_elided_tokens = 40
    """A run of repeated lines is elided only when it saves more than its marker costs."""
    excerpt_cache = 1024
    long_output = 1500
    """A recent output (not the current one) longer than this many tokens keeps its head, its tail and
    the lines around what recent steps mention; the current output always stays whole."""
    head_lines = 60
    tail_lines = 30
    trim_passing = True
    """A recent test run (not the current step) drops its rows of passing tests whatever its length."""

    def __init__(self) -> None:
        self._lines: dict[int, OutputLines] = {}
        self._passing: dict[int, frozenset[int]] = {}
        self._said: dict[int, frozenset[str]] = {}
        self._postings: dict[str, list[int]] = {}
        self._indexed = 0
        self._excerpts: dict[tuple[int, str, tuple[int, ...]], Excerpt] = {}

    def _index(self, graph: DependencyGraph) -> None:
        """Index nodes added since the last plan: once per node."""
        for index in range(self._indexed + 1, len(graph)):
            node = graph.node(index)
            self._said[index] = frozenset(WORD.findall(f"{node.step.thought}\n{node.step.action}"))
            if node.step.kind != "agent":
                continue
            lines = OutputLines.of(node)
            self._lines[index] = lines
            self._passing[index] = passing_rows(lines.lines)
            for word in lines.words:
                self._postings.setdefault(word, []).append(index)
        self._indexed = len(graph) - 1

    def plan(self, graph: DependencyGraph, config: WeaverConfig) -> Plan:
        k = len(graph) - 1
        window = config.window
        self._index(graph)
        warmup = warmup_plan(graph, window)
        if warmup is not None:
            return warmup
        floor = list(range(k, max(0, k - window), -1))
        full = [(k, "current step")] + [(i, f"one of the last {window} outputs") for i in floor[1:]]
        hot, parents = self._recent(graph, k)
        offers = self._offers(k - window + 1, hot, parents, config.select_excerpt_tokens)
        left = config.select_extra_tokens
        chosen: list[Offer] = []
        for offer in sorted(offers, key=lambda o: (-o.value / (o.tokens + 10), -o.index)):
            if offer.tokens <= left:
                chosen.append(offer)
                left -= offer.tokens
        keep: dict[int, set[int] | None] = {i: self._long_recent(i, hot) for i in floor}
        keep[k] = None
        for offer in chosen:
            keep[offer.index] = set(offer.keep)
            words = ", ".join(offer.hits[:3])
            full.append((offer.index, f"excerpt: the lines around {words}, which recent steps mention"))
        excerpts, repeated = self._dedupe(graph, k, k - window + 1, keep)
        full = [(i, reason) for i, reason in full if i not in repeated]
        return Plan(
            full=full,
            compressed_reason=f"older than the last {window} outputs and not about what recent steps mention",
            notes=[f"select: {window} recent outputs + {len(chosen)} excerpt(s) of older ones"],
            compressed_reasons={
                i: f"every line of its output recurs in step {j}'s" for i, j in repeated.items()
            },
            excerpts=excerpts,
        )

    def _recent(self, graph: DependencyGraph, k: int) -> tuple[set[str], set[int]]:
        """The words the last `lookback` steps said, and those steps' parents."""
        hot: set[str] = set()
        parents: set[int] = set()
        for index in range(max(1, k - self.lookback + 1), k + 1):
            hot |= self._said.get(index, frozenset())
            parents.update(graph.node(index).parent_ids)
        return hot, parents

    def _long_recent(self, index: int, hot: set[str]) -> set[int] | None:
        """A recent output: whole (None) unless it is long or a test run. A test run drops its passing
        rows; what is still long keeps its head, its tail and the regions around hot words."""
        lines = self._lines.get(index)
        if lines is None:
            return None
        passing = self._passing[index] if self.trim_passing else frozenset()
        rest = [n for n in range(len(lines.lines)) if n not in passing]
        if sum(lines.tokens[n] for n in rest) <= self.long_output:
            return set(rest) if passing else None
        keep = set(rest[: self.head_lines]) | set(rest[-self.tail_lines :])
        c, total = self.context_lines, len(lines.lines)
        for word in hot & lines.words.keys():
            if len(lines.words[word]) <= self.crowded:
                for n in lines.words[word]:
                    keep.update(i for i in range(max(0, n - c), min(total, n + c + 1)) if i not in passing)
                    keep.add(n)
        return keep

    def _offers(self, floor_start: int, hot: set[str], parents: set[int], cap: int) -> list[Offer]:
        candidates: dict[int, list[str]] = {}
        for word in hot:
            for index in self._postings.get(word, ())[-self.postings :]:
                if index < floor_start:
                    candidates.setdefault(index, []).append(word)
        offers = []
        weight = {word: 1.0 / math.log(2 + len(self._postings.get(word, ()))) for word in hot}
        bonus = 1.0 + self.parent_bonus

        def promise(index: int) -> tuple[float, int]:
            return -sum(weight[w] for w in candidates[index]) * (bonus if index in parents else 1.0), -index

        for index in sorted(candidates, key=promise)[: self.candidates]:
            offer = self._offer(index, candidates[index], weight, cap, index in parents)
            if offer is not None:
                offers.append(offer)
        return offers

    def _offer(
        self, index: int, words: list[str], weight: dict[str, float], cap: int, parent: bool
    ) -> Offer | None:
        lines = self._lines[index]
        score: dict[int, float] = {}
        hit_words = []
        for word in sorted(words):
            numbers = lines.words[word]
            if len(numbers) > self.crowded:
                continue
            hit_words.append(word)
            for n in numbers:
                score[n] = score.get(n, 0.0) + weight[word]
        keep: set[int] = set()
        spent, value = 0, 0.0
        c = self.context_lines
        passing = self._passing[index]
        for n in sorted(score, key=lambda n: (-score[n], n)):
            around = range(max(0, n - c), min(len(lines.lines), n + c + 1))
            add = [i for i in around if i not in keep and (i == n or i not in passing)]
            cost = sum(lines.tokens[i] for i in add)
            if spent + cost > cap:
                continue
            keep.update(add)
            spent += cost
            value += score[n]
        if not keep:
            return None
        bonus = 1.0 + (self.parent_bonus if parent else 0.0)
        return Offer(index, frozenset(keep), spent, value * bonus, tuple(hit_words))

    def _excerpt(self, graph: DependencyGraph, index: int, kept: set[int], why: str) -> Excerpt:
        """Built once per distinct (output, kept lines): the same excerpts recur from step to step."""
        key = (index, why, tuple(sorted(kept)))
        found = self._excerpts.get(key)
        if found is None:
            if len(self._excerpts) >= self.excerpt_cache:
                self._excerpts.clear()
            found = self._excerpts[key] = build_excerpt(graph.node(index), self._lines[index], kept, why)
        return found

    def _dedupe(
        self, graph: DependencyGraph, k: int, floor_start: int, keep: dict[int, set[int] | None]
    ) -> tuple[dict[int, Excerpt], dict[int, int]]:
        """Newest first: lines that recur in a later kept output are elided (the current step never)."""
        later: dict[str, int] = {}
        excerpts: dict[int, Excerpt] = {}
        repeated: dict[int, int] = {}
        for index in sorted(keep, reverse=True):
            if index not in self._lines:
                continue
            lines = self._lines[index]
            wanted = keep[index]
            numbers = range(len(lines.lines)) if wanted is None else sorted(wanted)
            repeats = {n for n in numbers if index != k and lines.key(n) in later}
            kept = set(numbers) - repeats
            for first, last in runs_of(repeats):  # a short run is not worth its marker
                if sum(lines.tokens[first : last + 1]) < self.min_elided_tokens:
                    kept.update(range(first, last + 1))
            seen_in = {later[key] for n in set(numbers) - kept if (key := lines.key(n)) is not None}
            for n in numbers:
                key = lines.key(n)
                if key is not None and key not in later:
                    later[key] = index
            if seen_in and not any(lines.lines[n].strip() for n in kept):
                repeated[index] = min(seen_in)
                continue
            if wanted is None and len(kept) == len(lines.lines):
                continue
            note = f"repeated in step {', '.join(str(s) for s in sorted(seen_in)[:3])}'s output"
            if wanted is None:
                marker = f"lines {note} cut"
            else:
                marker = "lines not near what recent steps mention cut" + (
                    f", and lines {note}" if seen_in else ""
                )
                if floor_start <= index:
                    marker = "a long output: head, tail and the lines near what recent steps mention kept" + (
                        f"; lines {note} cut" if seen_in else ""
                    )
                    if self.trim_passing and self._passing[index]:
                        marker = "a test run: its rows of passing tests cut" + (
                            "; what is still long keeps head, tail and the lines near what recent steps mention"
                            if len(wanted) + len(self._passing[index]) < len(lines.lines)
                            else ""
                        )
            excerpts[index] = self._excerpt(graph, index, kept, marker)
        return excerpts, repeated
