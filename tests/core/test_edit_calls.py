"""A cut keeps the calls of older edits before other older steps: a later edit often replaces what an
earlier one wrote (its old text is that call's new text), and without the call the agent edits text it
cannot see."""

from __future__ import annotations

from contextweaver import ContextWeaver, Step, WeaverConfig
from contextweaver.records import WovenContext

WROTE = "total = sum(item.price * item.count for item in basket)"
EDIT = f"cat > src/basket.py <<'EOF'\ndef total(basket):\n    {WROTE}\n    return total\nEOF"


def contexts(config: WeaverConfig, budget: int, steps: int = 30) -> list[WovenContext]:
    weaver = ContextWeaver(config)
    weaver.begin(
        [{"role": "system", "content": "You fix bugs."}, {"role": "user", "content": "Fix basket.py."}]
    )
    out = []
    for n in range(1, steps + 1):
        if n == 4:
            step = Step(thought="rewrite the total", action=EDIT, observation="")
        else:
            thought = f"Step {n}: the module may hold the cause, so read it before changing anything. " * 6
            action = f"cat src/mod_{n}.py && grep -rn 'value_{n}' " + " ".join(
                f"src/pkg_{k}/mod_{n}.py" for k in range(8)
            )
            step = Step(thought=thought, action=action, observation=f"value_{n} = {n}\n" * 25)
        weaver.add_step(step)
        out.append(weaver.context(budget))
    return out


def mode_of(context: WovenContext, index: int) -> str:
    return next(d.mode for d in context.decisions if d.index == index)


def test_an_old_edit_keeps_its_call_where_steps_beside_it_are_dropped() -> None:
    for config, budget in ((WeaverConfig(), 2500), (WeaverConfig(mode="per_step"), 3000)):
        last = contexts(config, budget)[-1]
        assert mode_of(last, 3) == mode_of(last, 5) == "dropped"  # the budget drops steps of its age
        assert mode_of(last, 4) == "compressed"
        assert WROTE in last.text() and last.tokens <= budget
        why = next(d.reason for d in last.decisions if d.index == 4)
        assert "src/basket.py" in why


def test_the_edit_calls_take_only_their_share_of_the_room() -> None:
    """An edit call bigger than the share is not kept: older outputs' room is not taken whole."""
    weaver = ContextWeaver(WeaverConfig())
    weaver.begin([{"role": "system", "content": "You fix bugs."}, {"role": "user", "content": "Fix it."}])
    big = "cat > src/big.py <<'EOF'\n" + "\n".join(f"line_{n} = {n}" for n in range(400)) + "\nEOF"
    for n in range(1, 31):
        action = big if n == 4 else f"cat src/mod_{n}.py"
        weaver.add_step(Step(thought=f"step {n}", action=action, observation=f"value_{n} = {n}\n" * 25))
    last = weaver.context(2500)
    assert mode_of(last, 4) == "dropped"
