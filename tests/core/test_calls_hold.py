"""The room a cut holds for older steps' calls comes out of what the recency floor leaves, never out of
the floor: held before it, the hold trimmed the newest outputs, the evidence the next step uses most."""

from __future__ import annotations

from contextweaver.nodes.extract import make_node, root_node
from contextweaver.records import Step
from contextweaver.weaving.plan import Plan
from contextweaver.weaving.weave import weave

ROOT = root_node([{"role": "system", "content": "You fix bugs."}, {"role": "user", "content": "Fix it."}])
STEPS = [
    make_node(
        n,
        Step(thought=f"read part {n}", action=f"cat src/part_{n}.py", observation=f"value_{n} = {n}\n" * 40),
    )
    for n in range(1, 9)
]
FLOOR = frozenset({8, 7, 6})


def modes(share: float, floor: frozenset[int] = FLOOR) -> dict[int, str]:
    plan = Plan(
        full=[(8, "current"), (7, "floor"), (6, "floor"), (5, "older, planned")],
        compressed_reason="older",
        ahead_of_edits=floor,
        calls_share=share,
    )
    room = sum(STEPS[i - 1].full_tokens for i in (8, 7, 6)) + 200
    woven = weave(ROOT, STEPS, plan, strategy="test", budget=ROOT.full_tokens + room)
    return {d.index: d.mode for d in woven.decisions}


def test_the_floor_stays_whole_and_older_calls_come_before_older_planned_outputs() -> None:
    held = modes(0.9)
    assert [held[i] for i in (8, 7, 6)] == ["full"] * 3
    assert held[5] == held[4] == held[1] == "compressed"  # all five older calls, not a trimmed output
    assert modes(0.0)[5] == "trimmed"  # without the hold the planned output takes the room


def test_a_plan_without_a_floor_holds_right_after_the_current_step() -> None:
    held = modes(0.9, frozenset())
    assert (held[8], held[7], held[6]) == ("full", "full", "trimmed")
