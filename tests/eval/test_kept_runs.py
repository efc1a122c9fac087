"""KeptRuns equals index_runs of `kept` at every step, however the decisions change, read from every
decision or from those of the steps a context shows."""

from __future__ import annotations

import random

from contextweaver.eval.kept_runs import KeptRuns
from contextweaver.eval.metrics import index_runs
from contextweaver.records import Decision


def test_kept_runs_follow_decisions_that_grow_change_and_shrink() -> None:
    rng = random.Random(5)
    modes = ["full", "trimmed", "compressed", "dropped"]
    decisions: list[Decision] = []
    runs, from_shown = KeptRuns(), KeptRuns()
    for _ in range(300):
        change = rng.random()
        if change < 0.6:  # steps appended, as a growing context does
            decisions = [*decisions, Decision(len(decisions) + 1, rng.choice(modes), "", 1)]
        elif change < 0.9 and decisions:  # one earlier step rendered anew (an excerpt taken or dropped)
            at = rng.randrange(len(decisions))
            decisions = [*decisions[:at], Decision(at + 1, rng.choice(modes), "", 1), *decisions[at + 1 :]]
        else:  # a cut: the context begins anew
            decisions = decisions[: rng.randrange(len(decisions) + 1)]
        kept = [d.index for d in decisions if d.mode in ("full", "trimmed")]
        assert runs.update(decisions) == index_runs(kept)
        shown = [d for d in decisions if d.mode != "dropped"]  # what a replay reads (`WovenContext.shown`)
        assert from_shown.update(shown) == index_runs(kept)
