"""The selection holds the details of only the outputs recent plans read (`output_index.DETAIL_LINES`):
an output's lines, keys and indexes dropped and built again from its node give the same contexts."""

from __future__ import annotations

from typing import Any

import pytest
from tests.identity.digests import synthetic_run

from contextweaver.eval.replay import replay_steps
from contextweaver.selectors import output_index
from contextweaver.selectors.select import SelectSelector
from contextweaver.strategies import build_strategy
from contextweaver.weaver import ContextWeaver

RUN = synthetic_run(160)


def replayed(budget: int | None) -> tuple[list[Any], output_index.OutputIndex]:
    """Every context of a cw-select replay (messages and tokens), and its output index."""
    strategy = build_strategy("cw-select", seed=0).strategy
    assert isinstance(strategy, ContextWeaver) and isinstance(strategy.selector, SelectSelector)
    contexts = [(r.context.messages, r.context.tokens) for r in replay_steps(RUN, strategy, (budget,))]
    return contexts, strategy.selector.index


@pytest.mark.parametrize("budget", [None, 4000])
def test_details_dropped_and_built_again_weave_the_same_contexts(
    budget: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    held, every = replayed(budget)
    monkeypatch.setattr(output_index, "DETAIL_LINES", 0)
    dropped, index = replayed(budget)
    outputs = sum(1 for step in RUN.steps if step.kind == "agent")
    assert index.built > outputs  # some details were dropped, then read again
    assert len(index._details) < outputs / 4
    assert every.built == outputs  # held: each built once
    assert dropped == held
