"""Recall by query: the records a cut left out or shortened, ranked against the agent's own words.

An agent does not know step numbers; it knows what it looks for ("the exact error of the last pytest
run"). `recall_query` ranks the steps the context does not hold whole with BM25 (Okapi, exact, our
own: the core depends on no ranking library) mixed with recency (much of what a cut shortens is
recent), fills a token budget (o200k) with whole records best first, each under the line saying what
it was (`recall.step_text`: step, command, test status), a labelled excerpt of its matching lines
where a record does not fit, and shows them in the order they happened. No model is called; what
comes back is what the agent saw, verbatim (an excerpt only leaves lines out, or cuts a very long
line around its match). The weights below were chosen on the train splits only (`benchmarks/query_recall.py
--split train --tune`): the most evidence delivered at 2,000 tokens over the train sets among the
settings at least 0.03 above the newest 2,000 tokens and BM25 over messages on each (docs/recall.md).
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from contextweaver.errors import ContextWeaverError
from contextweaver.nodes.recall import Recalled, step_text
from contextweaver.records import Node
from contextweaver.tokens import count_text

QUERY_BUDGET = 2000
"""o200k tokens of an answer unless asked otherwise."""
MAX_QUERY_CHARS = 2000
"""A longer query is read up to here (its words beyond add little and cost time)."""
SECONDS = 2.0
"""Most time one query spends filling its answer; the records placed by then are the answer."""
K1, B = 1.5, 0.75
"""Okapi BM25's term saturation and length normalization (the usual values)."""
RECENCY = 0.6
"""Weight of recency against the best match's score (1.0): the newest candidate gets all of it."""
PARENTS = 0.0
"""Share of a record's score given to its parents in the dependency graph: 0, since 0.3 gained on some train
sets and lost on others (docs/recall.md)."""
HALF_LIFE = 2.0
"""Steps over which recency halves (0: it falls linearly from the newest candidate to the oldest)."""
AROUND = 0
"""Lines an excerpt keeps on each side of a matching line."""
EXCERPT_SHARE = 0.5
"""Most of the budget an excerpt of one record takes (the top record's may take all that is left)."""
ACTIONS = False
"""A record found by query shows the step's action messages too (False: its outputs under the label,
which names the command; `expand` reads the whole step)."""
MIN_PIECE = 40
"""Tokens below which nothing more is added."""
LINE_CHARS = 400
"""A longer matching line is cut to this many characters around its first match."""
MAX_TERMS = 20_000
"""A giant output contributes its first this many terms to the index."""

_TERM = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./-]*[A-Za-z0-9_]|[A-Za-z0-9_]")
_PART = re.compile(r"[A-Za-z][a-z0-9]+|[A-Z]+(?![a-z])|\d+")
_SEPARATOR = re.compile(r"--- \w+ ---\n?")


class BadQuery(ContextWeaverError, ValueError):
    """A recall query without a word to search by."""


def terms(text: str, limit: int = MAX_TERMS) -> list[str]:
    """Lower-cased terms: whole code-like words (`astropy/io/html.py`) and their parts (`html`, `py`)."""
    out: list[str] = []
    for match in _TERM.finditer(text):
        word = match.group()
        out.append(word.lower())
        if len(word) > 3 and not word.isalnum():
            out.extend(part.lower() for part in _PART.findall(word) if len(part) > 1)
        if len(out) >= limit:
            break
    return out


class QueryIndex:
    """BM25 postings of documents added one at a time (a step's record, or a message): each is read once,
    and a query costs the postings of its own terms, not the history."""

    def __init__(self) -> None:
        self._postings: dict[str, list[tuple[int, int]]] = {}
        self._lengths: dict[int, int] = {}
        self._total = 0

    def __len__(self) -> int:
        return len(self._lengths)

    def __contains__(self, document: object) -> bool:
        return document in self._lengths

    def add(self, document: int, text: str) -> None:
        counts = Counter(terms(text))
        self._lengths[document] = sum(counts.values())
        self._total += self._lengths[document]
        for term, count in counts.items():
            self._postings.setdefault(term, []).append((document, count))

    def documents(self, term: str) -> list[int]:
        """The documents holding `term`, in the order they were added."""
        return [document for document, _ in self._postings.get(term, ())]

    def idf(self, term: str) -> float:
        found = len(self._postings.get(term, ()))
        return math.log(1 + (len(self._lengths) - found + 0.5) / (found + 0.5)) if found else 0.0

    def scores(self, query: Sequence[str], among: Collection[int] | None = None) -> dict[int, float]:
        """BM25 of each document (of `among`, when given) holding a query term, IDF over every document."""
        if not self._lengths:
            return {}
        mean = self._total / len(self._lengths) or 1.0
        out: dict[int, float] = {}
        for term in dict.fromkeys(query):
            idf = self.idf(term)
            for document, count in self._postings.get(term, ()):
                if among is not None and document not in among:
                    continue
                norm = count + K1 * (1 - B + B * self._lengths[document] / mean)
                out[document] = out.get(document, 0.0) + idf * count * (K1 + 1) / norm
        return out


@dataclass(frozen=True)
class Weights:
    """The ranking's settings (the module's constants by default; benchmarks/query_recall.py tries others)."""

    recency: float = RECENCY
    parents: float = PARENTS
    excerpt_share: float = EXCERPT_SHARE
    half_life: float = HALF_LIFE
    around: int = AROUND
    actions: bool = ACTIONS


def ranked(
    index: QueryIndex,
    query: str,
    candidates: Sequence[int],
    weights: Weights = Weights(),
    parents: Callable[[int], Sequence[int]] = lambda step: (),
) -> list[int]:
    """`candidates` (step indices, in order) best first: BM25 against `query` over the best match, plus
    recency, plus (with `weights.parents`) a share of each record's children's score."""
    words = terms(query[:MAX_QUERY_CHARS], MAX_QUERY_CHARS)
    among = set(candidates)
    bm25 = index.scores(words, among)
    top = max(bm25.values(), default=0.0) or 1.0
    score = {c: bm25.get(c, 0.0) / top for c in candidates}
    if weights.parents:
        lifted = dict(score)
        for child in candidates:
            for parent in parents(child):
                if parent in among:
                    lifted[parent] = max(lifted[parent], score[parent] + weights.parents * score[child])
        score = lifted
    if weights.recency and candidates:
        newest = candidates[-1]
        for position, step in enumerate(candidates, start=1):
            if weights.half_life:
                score[step] += weights.recency * 0.5 ** ((newest - step) / weights.half_life)
            else:
                score[step] += weights.recency * position / len(candidates)
    return sorted((c for c in candidates if score[c] > 0), key=lambda c: (-score[c], -c))


def recall_query(
    index: QueryIndex,
    query: str,
    budget: int,
    candidates: Sequence[int],
    record: Callable[[int], str],
    weights: Weights = Weights(),
    parents: Callable[[int], Sequence[int]] = lambda step: (),
) -> Recalled:
    """Of `candidates` (the steps the context does not hold whole, in order), those that best answer
    `query`, within `budget` o200k tokens, in the order they happened. `record(step)` is the step's text as
    `recall.step_text` writes it (its first line the label), which `index` holds under its number."""
    query = query[:MAX_QUERY_CHARS]
    if not terms(query, 1):
        raise BadQuery("recall needs words to search by (a command, a file, an error), not an empty query")
    started = time.monotonic()
    order = ranked(index, query, candidates, weights, parents)
    words = {t: index.idf(t) for t in terms(query, MAX_QUERY_CHARS)}

    def head(steps: int) -> str:
        return f'[recall "{_shown(query)}": {steps} step(s) of {len(candidates)} not held whole, in the order they happened]\n'

    left = budget - count_text(head(0)) - 2
    pieces: dict[int, str] = {}
    for step in order:
        if left < MIN_PIECE or time.monotonic() - started > SECONDS:
            break
        text = record(step)
        size = count_text(text)
        if size > left:
            room = left if not pieces else min(left, int(weights.excerpt_share * budget))
            text = excerpt(text, words, room, weights.around)
            size = count_text(text) if text else 0
            if not text or size > left:
                continue
        pieces[step] = text
        left -= size
    shown = sorted(pieces)
    return Recalled(head(len(shown)) + "".join(pieces[s] for s in shown), tuple(shown), 1, 1)


def node_records(
    nodes: Sequence[Node], whole: Collection[int] = (), actions: bool = ACTIONS
) -> tuple[list[int], Callable[[int], str]]:
    """The candidates of a query over `nodes` (root at 0): every step not held `whole`, and their records
    (`step_text`, with or without the assistant's messages)."""
    held = set(whole)
    return [n.index for n in nodes[1:] if n.index not in held], lambda step: step_text(nodes[step], actions)


def excerpt(text: str, words: Mapping[str, float], tokens: int, around: int = AROUND) -> str:
    """The record's lines that hold the most query words (rarest weigh most), each with the message
    separator before it, within `tokens`, under a label saying how many lines it shows."""
    label, _, body = text.partition("\n")
    lines = body.splitlines()
    separator = [i for i, line in enumerate(lines) if _SEPARATOR.fullmatch(line)]
    weight = []
    for i, line in enumerate(lines):
        present = set(terms(line[: LINE_CHARS * 10], 400)) & words.keys()
        if present:
            weight.append((sum(words[t] for t in present), -i))
    chosen: set[int] = set()
    used = count_text(label) + 12  # the label's excerpt part
    for _, negative in sorted(weight, reverse=True):
        i = -negative
        before = max((s for s in separator if s <= i), default=None)
        near = range(max(0, i - around), min(len(lines), i + around + 1))
        added = {*near, *([before] if before is not None else [])} - chosen
        cost = sum(count_text(_cut(lines[j], words)) + 2 for j in added)  # a line break and a gap mark
        if used + cost > tokens:
            continue
        chosen |= added
        used += cost
    if not any(not _SEPARATOR.fullmatch(lines[i]) for i in chosen):
        return ""
    return _render(label, lines, chosen, words)


def _render(label: str, lines: Sequence[str], chosen: Collection[int], words: Mapping[str, float]) -> str:
    shown = sum(1 for i in chosen if not _SEPARATOR.fullmatch(lines[i]))
    out = [f"{label[:-1]} | excerpt: {shown} of {len(lines)} lines]"]
    last = -1
    for i in sorted(chosen):
        if i > last + 1 and not _SEPARATOR.fullmatch(lines[i]):
            out.append("…")
        out.append(_cut(lines[i], words))
        last = i
    return "\n".join(out) + "\n"


def _cut(line: str, words: Mapping[str, float]) -> str:
    if len(line) <= LINE_CHARS:
        return line
    lowered = line.lower()
    at = min((p for w in words if (p := lowered.find(w)) >= 0), default=0)
    start = max(0, at - LINE_CHARS // 2)
    return ("…" if start else "") + line[start : start + LINE_CHARS] + "…"


def _shown(query: str) -> str:
    flat = " ".join(query.split())
    return flat if len(flat) <= 80 else flat[:79] + "…"
