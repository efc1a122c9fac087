from __future__ import annotations

from tests.core.helpers import ROOT, FixedParents, step

from contextweaver.config import WeaverConfig
from contextweaver.weaver import ContextWeaver


def weaver_with(edges: dict[int, list[int]], n: int) -> ContextWeaver:
    weaver = ContextWeaver(WeaverConfig(selector="frontier", mode="per_step"))
    weaver.annotator = FixedParents(edges)
    weaver.begin(ROOT)
    for i in range(1, n + 1):
        weaver.add_step(step(i))
    return weaver


def test_keeps_what_recent_steps_use_before_older_recent_steps() -> None:
    # step 20 uses 3; step 19 uses 7 and 2; everything else chains to its predecessor
    weaver = weaver_with({20: [3], 19: [7, 2]}, 20)
    context = weaver.context()
    assert context.kept == [2, 3, 7, 18, 19, 20]
    reasons = {d.index: d.reason for d in context.decisions}
    assert reasons[3].startswith("used by step 20")
    assert reasons[7].startswith("used by step 19") and reasons[19] == "recent step"
    assert "not used by the recent steps" in reasons[10]


def test_an_observation_leaves_once_nothing_recent_uses_it() -> None:
    weaver = weaver_with({12: [2]}, 12)
    assert 2 in weaver.context().kept
    for i in range(13, 19):
        weaver.add_step(step(i))
    assert 2 not in weaver.context().kept
    assert len(weaver.context().kept) == 6  # current step plus W=5
