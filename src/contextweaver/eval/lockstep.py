"""Several strategies replayed in lockstep, each summed up as it goes (what `contextweaver replay` shows).

One step's contexts are alive at a time, and each strategy's evidence and prompt-cache figures are
updated from what changed since its last context (`ContextTrack`, `PrefixCache`), so a whole run costs
time linear in its length and memory bounded by its largest contexts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial

from contextweaver.eval.context_track import ContextTrack
from contextweaver.eval.evidence import next_step_evidence
from contextweaver.eval.replay import ReplayStep, replay
from contextweaver.formats.base import Trajectory
from contextweaver.prompt_cache import CostMeter
from contextweaver.protocols import Strategy
from contextweaver.records import WovenContext


@dataclass
class Totals:
    """One strategy's running sums: tokens, next-step evidence recall, prompt-cache cost."""

    asked: set[str]
    """Every item the replay will ask about."""
    tokens: int = 0
    steps: int = 0
    max_tokens: int = 0
    hits: int = 0
    items: int = 0
    meter: CostMeter = field(default_factory=CostMeter)
    track: ContextTrack = field(init=False)

    def __post_init__(self) -> None:
        self.track = ContextTrack(self.asked, self.meter.cache.tokens)

    def add(self, context: WovenContext, items: frozenset[str]) -> int:
        """Count one context in; returns how many of `items` (the next step's evidence) it holds."""
        self.track.update(context.messages)
        hits = self.track.covered(items)
        self.tokens, self.steps = self.tokens + context.tokens, self.steps + 1
        self.max_tokens = max(self.max_tokens, context.tokens)
        self.hits, self.items = self.hits + hits, self.items + len(items)
        self.meter.add(context.messages, context.full_history_tokens)
        return hits


@dataclass
class LockstepStep:
    """One step of every strategy: their replayed steps, the next step's evidence, each one's hits."""

    steps: list[ReplayStep]
    items: frozenset[str]
    hits: list[int]

    @property
    def index(self) -> int:
        return self.steps[0].index


class Lockstep:
    """`names` replayed through `make(name)` at one budget; iterate it once, then read `totals`."""

    def __init__(
        self,
        trajectory: Trajectory,
        names: Sequence[str],
        make: Callable[[str], Strategy],
        budget: int | None = None,
    ) -> None:
        self.names = list(names)
        self.evidence = {e.index: e.items for e in next_step_evidence(trajectory)}
        asked = set().union(*self.evidence.values())
        self.totals = {name: Totals(asked) for name in self.names}
        self._replays = [replay(trajectory, partial(make, name), budget) for name in self.names]

    def __iter__(self) -> Iterator[LockstepStep]:
        for steps in zip(*self._replays, strict=True):
            items = self.evidence.get(steps[0].index + 1, frozenset())
            hits = [self.totals[n].add(s.context, items) for n, s in zip(self.names, steps, strict=True)]
            yield LockstepStep(list(steps), items, hits)
