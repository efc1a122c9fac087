"""Evidence-per-token selection: a recency floor, then excerpts of the older outputs the work still uses.

1. Floor: the last W outputs stay whole (a W-window never knows more about the recent past than this);
   one is trimmed only when it alone would take more than `recent_share` of the room.
2. Older outputs are searched for the words the last few steps' thoughts and actions mention (a word
   weighs 1 / log(2 + the outputs holding it), so a rare name counts more than a common one); each
   output offers the lines around its hits (whole lines, at most `excerpt_tokens`), valued by hits per
   token, doubled when the graph makes the output a parent of a recent step. An older view of a file
   recent steps name (`views.py`), or of a file in the same folder, is a candidate even when its output
   holds none of their words, is worth three times as much per hit, and also offers its outline: its
   definition lines, each alone, and the lines whose numbers bracket a range recent views of the file
   showed (the page an agent reads next).
   The best offers are taken until `extra_tokens` are spent (more in a run of big steps); an output of the
   W steps just before the floor may offer twice the lines when they fit. A word on many lines of one
   output marks nothing there, and a line its own step's action holds (an edit's echo) marks nothing.
3. Every kept output loses the lines the context holds elsewhere: in a later kept output, a kept step's
   thought or action, the task, or earlier in the same output (`repeat_cut.py`). An older view of a
   region a newer view repeats costs only its changed lines.

All of it is deterministic, calls no LLM, and per step reads only the recent steps plus the outputs a
posting list links to their words (the newest `postings` per word), so its cost stays flat as runs grow.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import asdict, replace

from contextweaver.config import WeaverConfig
from contextweaver.config.select_weights import SelectSettings, load_settings
from contextweaver.nodes.graph import DependencyGraph
from contextweaver.nodes.views import beside, folder_of, same_file
from contextweaver.selectors.offers import Offer, Recent, cut_offer
from contextweaver.selectors.output_index import OutputIndex
from contextweaver.selectors.pages import page_lines
from contextweaver.selectors.repeat_cut import Cut
from contextweaver.weaving.aimed_trim import Aim
from contextweaver.weaving.budget import Budget
from contextweaver.weaving.excerpts import Excerpt, OutputLines, build_excerpt
from contextweaver.weaving.plan import Plan

REFERENCE_STEP = 750.0
"""Tokens of a mean step up to which `extra_tokens` is spent as fitted; a run of bigger steps gets a
proportionally bigger allowance (tool-calling agents print whole-file views). Set on the train splits
(docs/TUNING.md)."""
MAX_SCALE = 2.0
"""The allowance grows to at most this multiple of `extra_tokens`."""
NEAR_CAP = 2.0
"""An output of the W steps just before the floor may offer up to this multiple of `excerpt_tokens`: next-step
evidence falls off with distance, and most misses 5-9 outputs back were in outputs excerpted at the cap
without the line used. Its offer is ranked by the capped offer's value per token; the wider one is taken when
it fits the allowance left, else the capped one. Set on the train splits (docs/TUNING.md)."""
LONG_KEPT = 0.8
"""A long recent output whose excerpt would keep this share of its tokens or more stays whole: the few lines
such an excerpt cuts save little room, and in a room of two or three steps they held what the next step
used (an edit's target lines in the middle of a file view). Chosen on the train splits (docs/TUNING.md)."""

REASONS = {
    "current": "current step",
    "floor": "one of the last {window} outputs",
    "older": "older than the last {window} outputs and not about what recent steps mention",
    "note": "select: {window} recent outputs + {chosen} excerpt(s) of older ones",
    "repeated": "every line of its output is {where}",
    "hits": "the lines around {words}, which recent steps mention",
    "outline": "the definition lines of this view of {path}, a file recent steps name",
    "beside": "the definition lines of this view of {path}, beside files recent steps name",
    "pages": "the lines numbered around the ranges recent views of it showed (the pages read next)",
    "repeats cut": "lines {note} cut",
    "far cut": "lines not near what recent steps mention cut",
    "far and repeats cut": ", and lines {note}",
    "long": "a long output: head, tail and the lines near what recent steps mention kept",
    "long and repeats cut": "; lines {note} cut",
    "test run": "a test run: its rows of passing tests cut",
    "test run still long": "; what is still long keeps head, tail and the lines near what recent steps mention",
}
"""Every sentence the selection writes into a plan: why a step is kept, excerpted or compressed."""


class SelectSelector:
    name = "select"
    lookback: int
    context_lines: int
    crowded: int
    parent_bonus: float
    file_bonus: float
    file_weight: float
    outline_weight: float
    file_lookback: int
    candidates: int
    recent_share: float
    long_output: int
    head_lines: int
    tail_lines: int
    trim_passing: bool
    extra_tokens: int
    excerpt_tokens: int
    """The fitted settings (`config/select_weights.py::SelectSettings`, where each says why), one attribute each."""
    postings = 64
    """Per word, only its newest outputs are searched (keeps the per-step cost flat)."""
    excerpt_cache = 1024

    @classmethod
    def from_config(cls, config: WeaverConfig) -> SelectSelector:
        """The settings of `select.weights` (else the shipped file); `select.extra_tokens` and `select.excerpt_tokens` override theirs."""
        settings = load_settings(config.select.weights)
        if config.select.extra_tokens is not None:
            settings = replace(settings, extra_tokens=config.select.extra_tokens)
        if config.select.excerpt_tokens is not None:
            settings = replace(settings, excerpt_tokens=config.select.excerpt_tokens)
        return cls(settings)

    def __init__(self, settings: SelectSettings | None = None) -> None:
        self.settings = settings or load_settings()
        self.__dict__.update(asdict(self.settings))
        self.index = OutputIndex()
        """What the selection reads of each step, indexed once per node (a public query API)."""
        self._excerpts: dict[tuple[int, str, tuple[int, ...]], Excerpt] = {}
        self._offer_cache: dict[tuple[object, ...], Offer | None] = {}

    def plan(self, graph: DependencyGraph, config: WeaverConfig) -> Plan:
        k = len(graph) - 1
        window = config.window
        self.index.update(graph)
        floor = list(range(k, max(0, k - window), -1))
        full = [(k, REASONS["current"])] + [(i, REASONS["floor"].format(window=window)) for i in floor[1:]]
        recent = self._recent(graph, k)
        hot = recent.words
        offers = self._offers(k - window + 1, recent, self.excerpt_tokens, k - 2 * window + 1)
        left = self._allowance(k)
        chosen: list[Offer] = []
        for offer in sorted(offers, key=lambda o: (-o.value / (o.tokens + 10), -o.index)):
            if offer.wider is not None and offer.wider.tokens <= left:
                offer = offer.wider
            if offer.tokens <= left:
                chosen.append(offer)
                left -= offer.tokens
        longest = self.recent_share * self._room(graph, config)
        keep: dict[int, set[int] | None] = {i: self._long_recent(i, hot, longest) for i in floor}
        keep[k] = None
        for offer in chosen:
            keep[offer.index] = set(offer.keep)
            full.append((offer.index, self._why(offer, recent)))
        excerpts, repeated = self._dedupe(graph, k, k - window + 1, keep)
        full = [(i, reason) for i, reason in full if i not in repeated]
        return Plan(
            full=full,
            compressed_reason=REASONS["older"].format(window=window),
            notes=[REASONS["note"].format(window=window, chosen=len(chosen))],
            compressed_reasons={
                i: REASONS["repeated"].format(where=Cut(set(), {j}, False).note) for i, j in repeated.items()
            },
            excerpts=excerpts,
            ahead_of_edits=frozenset(floor),
            aims={} if (aim := self._aim(k, hot)) is None else {k: aim},
        )

    def _allowance(self, k: int) -> int:
        """`extra_tokens`, scaled by how much bigger this run's mean step is than REFERENCE_STEP (at most
        MAX_SCALE): where every output is long, an excerpt of an old one costs more for the same lines."""
        scale = min(MAX_SCALE, max(1.0, self.index.mean_step(k) / REFERENCE_STEP))
        return int(self.extra_tokens * scale)

    def _why(self, offer: Offer, recent: Recent) -> str:
        parts = [REASONS["hits"].format(words=", ".join(offer.hits[:3]))] if offer.hits else []
        path = self.index.viewed(offer.index)
        if path is not None and any(same_file(path, f) for f in recent.files):
            parts.append(REASONS["outline"].format(path=path))
            if offer.paged:
                parts.append(REASONS["pages"])
        elif path is not None and any(beside(path, f) for f in recent.files):
            parts.append(REASONS["beside"].format(path=path))
        return "excerpt: " + "; ".join(parts)

    def _recent(self, graph: DependencyGraph, k: int) -> Recent:
        """The words the last `lookback` steps said and their parents; the files the last `file_lookback` named."""
        pages = []
        for index in range(max(1, k - self.lookback + 1), k + 1):
            path, span = self.index.viewed(index), self.index.span(index)
            if path is not None and span is not None:
                pages.append((path, *span))
        recent = Recent(set(), set(), set(), tuple(pages))
        for index in range(max(1, k - self.file_lookback + 1), k + 1):
            recent.files.update(self.index.files(index))
        for index in range(max(1, k - self.lookback + 1), k + 1):
            recent.words.update(self.index.said(index))
            recent.parents.update(graph.node(index).parent_ids)
        return recent

    def _room(self, graph: DependencyGraph, config: WeaverConfig) -> float:
        """The room above the root: the budget's (safety factor applied), else `long_output`."""
        if config.budget is None:
            return float(self.long_output)
        return max(
            0.0, Budget(config.budget, config.token_safety_factor).messages - graph.node(0).full_tokens
        )

    def _long_recent(self, index: int, hot: set[str], longest: float) -> set[int] | None:
        """A recent output: whole (None) unless it alone takes more than `longest` tokens or is a test
        run. A test run drops its passing rows; what is still too long keeps its head, its tail and the
        regions around hot words, unless that keeps nearly all of it (LONG_KEPT)."""
        lines = self.index.lines(index)
        if lines is None:
            return None
        passing = self.index.passing(index) if self.trim_passing else frozenset()
        rest = [n for n in range(len(lines.lines)) if n not in passing]
        whole = set(rest) if passing else None
        tokens = sum(lines.tokens[n] for n in rest)
        if tokens <= longest:
            return whole
        keep = set(rest[: self.head_lines]) | set(rest[-self.tail_lines :])
        c, total = self.context_lines, len(lines.lines)
        for n in self._hits(lines, hot):
            keep.update(i for i in range(max(0, n - c), min(total, n + c + 1)) if i not in passing)
            keep.add(n)
        return whole if sum(lines.tokens[n] for n in keep) >= LONG_KEPT * tokens else keep

    def _aim(self, index: int, hot: set[str]) -> Aim | None:
        """Where the current output is cut when it does not fit whole (a file view beside a root that fills
        most of the budget): around its lines that hold hot words (a word on many of its lines marks none),
        beside its head and tail; None when no line does (its head and tail alone are kept)."""
        lines = self.index.lines(index)
        if lines is None:
            return None
        marked = self._hits(lines, hot)
        return Aim(lines, tuple(sorted(marked))) if marked else None

    def _hits(self, lines: OutputLines, hot: set[str]) -> set[int]:
        """The lines of an output that hold hot words, except words on more than `crowded` of its lines."""
        crowded = self.crowded
        return {
            n
            for word in hot & lines.words.keys()
            if len(found := lines.words[word]) <= crowded
            for n in found
        }

    def _linked(self, floor_start: int, files: set[str]) -> set[int]:
        """Older views of the files recent steps name and of the files beside them, in the same folder
        (the newest `postings` per file name and per folder name): a new script or an edit uses names
        from the module's neighbours (10+ misses of SWE-agent-LM-32B train runs: most at a `create` step, in
        views the selection left out). Chosen on the train splits (docs/TUNING.md)."""
        newest = self.postings
        same = {index for path in files for index in self.index.views_of(path, floor_start, newest)}
        folders = {folder for folder in map(folder_of, files) if folder is not None}
        return same | {i for folder in folders for i in self.index.views_in(folder, floor_start, newest)}

    def _offers(self, floor_start: int, recent: Recent, cap: int, near_start: int) -> list[Offer]:
        """The best `candidates` outputs' offers; those from `near_start` on carry a wider one (NEAR_CAP)."""
        candidates, linked = self._candidates(floor_start, recent)
        weight = {word: 1.0 / math.log(2 + self.index.spread(word)) for word in recent.words}
        parent_bonus, file_bonus = self.parent_bonus, self.file_bonus
        bonus = {
            index: 1.0
            + (parent_bonus if index in recent.parents else 0.0)
            + (file_bonus if index in linked else 0.0)
            for index in candidates
        }
        offers = []
        for index in self._most_promising(candidates, weight, bonus, linked):
            offer = self._ranked_offer(
                index,
                candidates[index],
                weight,
                cap,
                bonus[index],
                recent,
                index in linked,
                index >= near_start,
            )
            if offer is not None:
                offers.append(offer)
        return offers

    def _candidates(self, floor_start: int, recent: Recent) -> tuple[dict[int, list[str]], set[int]]:
        """The outputs before the floor that hold words recent steps said (each with those words), and the
        linked views (`_linked`), which are candidates without the words too."""
        candidates: dict[int, list[str]] = {}
        for word in sorted(
            recent.words
        ):  # a fixed order: float sums, and so ties, must not follow the hash seed
            for index in self.index.holding(word, self.postings):
                if index < floor_start:
                    candidates.setdefault(index, []).append(word)
        linked = self._linked(floor_start, recent.files)
        # A linked view that holds none of the words is ranked by its parent bonus and its age alone: of
        # those with and without the bonus, only the newest `candidates` each can rank, so the rest are
        # left out here (the ranking is the same; a run's many views of a file stay a bounded cost).
        unnamed = sorted((i for i in linked if i not in candidates), reverse=True)
        with_bonus = [i for i in unnamed if i in recent.parents][: self.candidates]
        for index in with_bonus + [i for i in unnamed if i not in recent.parents][: self.candidates]:
            candidates[index] = []
        return candidates, linked

    def _most_promising(
        self,
        candidates: dict[int, list[str]],
        weight: dict[str, float],
        bonus: dict[int, float],
        linked: set[int],
    ) -> list[int]:
        """The `candidates` outputs whose weighted words (plus `file_weight` for a linked view) times their
        bonus are highest, the newest first on a tie: one pass, no call per candidate."""
        file_weight = self.file_weight
        promise = [
            (
                -(sum([weight[w] for w in words]) + (file_weight if index in linked else 0.0)) * bonus[index],
                -index,
            )
            for index, words in candidates.items()
        ]
        return [-negative for _, negative in heapq.nsmallest(self.candidates, promise)]

    def _ranked_offer(
        self,
        index: int,
        words: list[str],
        weight: dict[str, float],
        cap: int,
        bonus: float,
        recent: Recent,
        linked: bool,
        near: bool,
    ) -> Offer | None:
        """One candidate's offer (a linked view's with the pages recent views bracket); `near` the floor, with
        a wider one (NEAR_CAP) when that holds more."""
        pages = (
            page_lines(self.index.viewed(index), self.index.numbers(index), recent.pages) if linked else ()
        )
        offer = self._offer(index, words, weight, cap, bonus, linked, pages)
        if offer is None or not near:
            return offer
        wider = self._offer(index, words, weight, int(cap * NEAR_CAP), bonus, linked, pages)
        return replace(offer, wider=wider) if wider is not None and wider.tokens > offer.tokens else offer

    def _offer(
        self,
        index: int,
        words: list[str],
        weight: dict[str, float],
        cap: int,
        bonus: float,
        linked: bool,
        pages: tuple[tuple[int, float], ...] = (),
    ) -> Offer | None:
        key = (index, cap, bonus, linked, pages, tuple((w, weight[w]) for w in sorted(words)))
        if key in self._offer_cache:  # the same output and words recur from step to step
            return self._offer_cache[key]
        if len(self._offer_cache) >= self.excerpt_cache:
            self._offer_cache.clear()
        lines = self.index.lines(index)
        assert lines is not None  # a candidate is an agent output (it holds words or is a view)
        score: dict[int, float] = {}
        hits = []
        own = self.index.own(index)  # in the context with the step's own action: worth nothing here
        for word in sorted(words):
            found = lines.words[word]
            if len(found) > self.crowded:
                continue
            fresh = [n for n in found if n not in own] if own else found
            if not fresh:
                continue
            hits.append(word)
            for n in fresh:
                score[n] = score.get(n, 0.0) + weight[word]
        alone: set[int] = set()
        # a linked view's definition lines (its outline), then the line numbers around a range the agent is
        # paging through: each worth keeping alone
        outline = [(n, self.outline_weight) for n in self.index.outline(index)] if linked else []
        for n, points in [*outline, *pages]:
            if n in own:
                continue
            if n not in score:
                alone.add(n)
            score[n] = score.get(n, 0.0) + points
        offer = cut_offer(
            index, lines, score, alone, self.index.passing(index), self.context_lines, cap, bonus, hits
        )
        if offer is not None and pages:
            offer = replace(offer, paged=True)
        self._offer_cache[key] = offer
        return offer

    def _excerpt(self, graph: DependencyGraph, index: int, kept: set[int], why: str) -> Excerpt:
        """Built once per distinct (output, kept lines): the same excerpts recur from step to step."""
        key = (index, why, tuple(sorted(kept)))
        found = self._excerpts.get(key)
        if found is None:
            if len(self._excerpts) >= self.excerpt_cache:
                self._excerpts.clear()
            lines = self.index.lines(index)
            assert lines is not None  # only outputs are excerpted
            found = self._excerpts[key] = build_excerpt(graph.node(index), lines, kept, why)
        return found

    def _dedupe(
        self, graph: DependencyGraph, k: int, floor_start: int, keep: dict[int, set[int] | None]
    ) -> tuple[dict[int, Excerpt], dict[int, int]]:
        """Each kept output without the lines the context holds elsewhere (`repeat_cut`), as an excerpt
        that says why its lines were cut; an output all of whose lines recur is compressed instead."""
        excerpts: dict[int, Excerpt] = {}
        repeated: dict[int, int] = {}
        for index, cut in self.index.repeats.cuts(keep, k, self.index.keyed):
            lines, wanted, kept = self.index.lines(index), keep[index], cut.kept
            assert lines is not None  # `cuts` yields outputs only
            if cut.seen_in and not any(lines.lines[n].strip() for n in kept):
                repeated[index] = min(cut.seen_in)
                continue
            if wanted is None and len(kept) == len(lines.lines):
                continue
            passing = self.index.passing(index)
            excerpts[index] = self._excerpt(
                graph, index, kept, self._marker(cut, wanted, passing, len(lines.lines), floor_start <= index)
            )
        return excerpts, repeated

    def _marker(
        self, cut: Cut, wanted: set[int] | None, passing: frozenset[int], total: int, recent: bool
    ) -> str:
        """What an excerpt says was cut: repeated lines, lines far from recent words, a long recent
        output's middle, or a test run's passing rows."""
        note = cut.note
        if wanted is None:
            return REASONS["repeats cut"].format(note=note)
        if not recent:
            return REASONS["far cut"] + (REASONS["far and repeats cut"].format(note=note) if note else "")
        if self.trim_passing and passing:
            still_long = len(wanted) + len(passing) < total
            return REASONS["test run"] + (REASONS["test run still long"] if still_long else "")
        return REASONS["long"] + (REASONS["long and repeats cut"].format(note=note) if note else "")
