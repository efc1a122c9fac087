"""Evidence delivered by query (docs/evaluation.md, metric 9): after a cut, does a recall by plain words
hand back what the next step needs?

At each step k+1 whose context (the strategy replayed at `cut_budget`) does not hold every earlier
output whole, the items of next-step evidence (metric 2) whose source outputs are none of them whole
there are asked for; the query is step k+1's thought and action with every such item removed (the agent
knows what it looks for, not the value). Each method returns text within N o200k tokens; an item is
delivered when it occurs in that text. Methods:

- `query`: `nodes/recall_query.py` over the steps the context does not hold whole (one column per
  `Weights` setting tried);
- `grep`: the transcript lines holding the query's two rarest words (fewest lines), in file order,
  each cut to 2,000 characters;
- `newest`: the last N tokens of the transcript;
- `bm25`: each earlier message a document, best first, whole, while one fits.

The transcript is the root's and the steps' messages as the agent saw them, one line per line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from contextweaver.eval.evidence import EarlierText, next_step_evidence
from contextweaver.eval.replay import replay_steps
from contextweaver.formats.base import Trajectory
from contextweaver.nodes.recall import step_text
from contextweaver.nodes.recall_query import QueryIndex, Weights, recall_query, terms
from contextweaver.records import Message, message_text
from contextweaver.strategies import build_strategy
from contextweaver.tokens import count_text

BUDGETS = (1000, 2000, 4000)
CUT_BUDGET = 8000
"""The budget the strategy's contexts are cut to (the default strategy `cw`)."""
GREP_LINE_CHARS = 2000
GREP_MIN_CHARS = 3
"""grep's words: at least this long (a one- or two-letter word is no search)."""
BASELINES = ("grep", "newest", "bm25")


@dataclass
class Transcript:
    """What the agent saw so far, kept as it grows: lines (with their tokens and a term index for grep)
    and messages (a BM25 index for the messages baseline)."""

    lines: list[str] = field(default_factory=list)
    line_tokens: list[int] = field(default_factory=list)
    line_index: QueryIndex = field(default_factory=QueryIndex)
    messages: list[str] = field(default_factory=list)
    message_index: QueryIndex = field(default_factory=QueryIndex)

    def add(self, messages: Iterable[Message]) -> None:
        for message in messages:
            text = message_text(message)
            self.message_index.add(len(self.messages), text)
            self.messages.append(text)
            for line in text.splitlines() or [""]:
                self.line_index.add(len(self.lines), line[: GREP_LINE_CHARS * 5])
                self.lines.append(line)
                self.line_tokens.append(count_text(line[: GREP_LINE_CHARS * 5]) + 1)

    def grep(self, query: str, budget: int) -> str:
        found = sorted(
            (len(lines), w)
            for w in dict.fromkeys(terms(query))
            if len(w) >= GREP_MIN_CHARS and (lines := self.line_index.documents(w))
        )
        hits = sorted({line for _, w in found[:2] for line in self.line_index.documents(w)})
        return _filled((self.lines[i][:GREP_LINE_CHARS] for i in hits), budget, "\n")

    def newest(self, budget: int) -> str:
        used, start = 0, len(self.lines)
        while start and used + self.line_tokens[start - 1] <= budget:
            start -= 1
            used += self.line_tokens[start]
        return "\n".join(self.lines[start:])

    def bm25(self, query: str, budget: int) -> str:
        scores = self.message_index.scores(terms(query))
        order = sorted(scores, key=lambda m: (-scores[m], -m))
        return _filled((self.messages[m] for m in order), budget, "\n\n", skip=True)


def _filled(pieces: Iterable[str], budget: int, joint: str, skip: bool = False) -> str:
    """Pieces in the order given while they fit `budget` (`skip`: a piece too big is passed over)."""
    out: list[str] = []
    used = 0
    for piece in pieces:
        size = count_text(piece) + 1
        if used + size > budget:
            if skip:
                continue
            break
        out.append(piece)
        used += size
    return joint.join(out)


def without(text: str, items: Iterable[str]) -> str:
    """`text` with every item removed (the longest first, so an item inside another goes with it)."""
    for item in sorted(items, key=len, reverse=True):
        text = text.replace(item, " ")
    return re.sub(r"[ \t]+", " ", text)


def query_recall(
    trajectory: Trajectory,
    settings: Mapping[str, Weights] | None = None,
    budgets: Sequence[int] = BUDGETS,
    strategy: str = "cw",
    cut_budget: int = CUT_BUDGET,
) -> list[dict[str, Any]]:
    """One record per asked step: `items` asked, and per method and budget the items delivered
    (`"{method}@{budget}"`); `settings` names the recall-by-query weights tried (default: the module's)."""
    settings = dict(settings or {"query": Weights()})
    evidence = {e.index: e.items for e in next_step_evidence(trajectory)}
    earlier = EarlierText(trajectory, set().union(*evidence.values()))
    built = build_strategy(strategy)
    graph = built.strategy.graph  # type: ignore[attr-defined]  # a ContextWeaver strategy
    transcript = Transcript()
    transcript.add(trajectory.root)
    index = QueryIndex()
    records: list[dict[str, Any]] = []
    last = len(trajectory.steps)
    for replayed in replay_steps(trajectory, built.strategy, (cut_budget,)):
        k = replayed.index
        node = replayed.node
        index.add(k, step_text(node))
        transcript.add(node.step.chat_messages())
        if k >= last:
            break
        context = replayed.context
        whole = {d.index for d in context.shown if d.mode == "full"}
        if len(whole) >= k:
            continue
        asked = frozenset(
            item
            for item in evidence.get(k + 1, ())
            if not any(s + 1 in whole for s in earlier.sources(item, k))
        )
        if not asked:
            continue
        nxt = trajectory.steps[k]
        query = without(f"{nxt.thought}\n{nxt.action}", asked).strip()
        record: dict[str, Any] = {"step": k + 1, "items": len(asked)}
        candidates = [i for i in range(1, k + 1) if i not in whole]
        for budget in budgets:
            texts = {
                "grep": transcript.grep(query, budget),
                "newest": transcript.newest(budget),
                "bm25": transcript.bm25(query, budget),
            }
            for name, weights in settings.items():
                texts[name] = _answer(graph, index, query, budget, candidates, weights)
            for name, text in texts.items():
                record[f"{name}@{budget}"] = sum(1 for item in asked if item in text)
        records.append(record)
    return records


def _answer(
    graph: Any, index: QueryIndex, query: str, budget: int, candidates: list[int], weights: Weights
) -> str:
    """Recall by query's text for this step ("" for a query without a word left)."""
    if not terms(query, 1):
        return ""

    def record(step: int) -> str:
        return step_text(graph.nodes[step], weights.actions)

    def parents(step: int) -> tuple[int, ...]:
        return tuple(graph.nodes[step].parent_ids)

    return recall_query(index, query, budget, candidates, record, weights, parents).text
