"""Lazy weaving: the history passes through until the budget demands a cut; between cuts the prefix is
byte-stable; a cut weaves once down to the low-water mark and its choices stay frozen."""

from __future__ import annotations

import pytest

from contextweaver.baselines.full import FullHistory
from contextweaver.config import WeaverConfig
from contextweaver.tokens import count_message
from contextweaver.types import Step, WovenContext
from contextweaver.weaver import ContextWeaver
from tests.core.helpers import ROOT, step

FAILING = "tests/test_pager.py::test_last_page FAILED\n=========== 1 failed, 3 passed in 0.12s ==========="


def steps(n: int) -> list[Step]:
    out = [step(i, lines=25) for i in range(1, n + 1)]
    out[3] = Step("Run the tests.", "python -m pytest -v tests/test_pager.py", FAILING)
    return out


def replay(weaver: ContextWeaver | FullHistory, n: int, budget: int | None) -> list[WovenContext]:
    weaver.begin(ROOT)
    contexts = []
    for s in steps(n):
        weaver.add_step(s)
        contexts.append(weaver.context(max_tokens=budget))
    return contexts


def recount(context: WovenContext) -> int:
    return sum(count_message(m) for m in context.messages)


def test_without_a_budget_the_history_passes_through_unchanged() -> None:
    lazy = replay(ContextWeaver(), 30, None)
    full = replay(FullHistory(), 30, None)
    for mine, theirs in zip(lazy, full, strict=True):
        assert mine.messages == theirs.messages and mine.tokens == theirs.tokens
        assert not mine.compacted and mine.test_status is None


def test_a_budget_never_reached_changes_nothing() -> None:
    lazy = replay(ContextWeaver(), 12, 100_000)
    assert [c.messages for c in lazy] == [c.messages for c in replay(FullHistory(), 12, None)]


def test_between_cuts_each_context_extends_the_last_one_byte_for_byte() -> None:
    config = WeaverConfig(high_water=0.9, low_water=0.6)
    contexts = replay(ContextWeaver(config), 40, 3000)
    cuts = [i for i, c in enumerate(contexts) if c.compacted]
    assert len(cuts) >= 3, "the run must cross the budget several times"
    for before, after in zip(contexts, contexts[1:], strict=False):
        assert recount(after) == after.tokens <= 0.9 * 3000
        if after.compacted:
            continue
        body = before.messages[:-1] if before.test_status else before.messages
        assert after.messages[: len(body)] == body
    for i in cuts:
        status = count_message(contexts[i].messages[-1]) if contexts[i].test_status else 0
        assert contexts[i].tokens - status <= 0.6 * 3000
        assert any("woven down to 60%" in note for note in contexts[i].notes)


def test_what_a_cut_compressed_stays_compressed_until_the_next_cut() -> None:
    contexts = replay(ContextWeaver(WeaverConfig(low_water=0.5)), 40, 3000)
    cut = next(i for i, c in enumerate(contexts) if c.compacted)
    frozen = {d.index: d for d in contexts[cut].decisions}
    assert any(d.mode != "full" for d in frozen.values())
    for later in contexts[cut + 1 :]:
        if later.compacted:
            break
        assert {d.index: d for d in later.decisions if d.index in frozen} == frozen


def test_after_a_cut_the_current_test_status_goes_last() -> None:
    contexts = replay(ContextWeaver(), 40, 3000)
    assert all(
        c.test_status is None for c in contexts[: next(i for i, c in enumerate(contexts) if c.compacted)]
    )
    after = [c for c in contexts if c.test_status]
    assert after and all(c.messages[-1]["content"] == c.test_status for c in after)
    assert "test_last_page" in after[-1].test_status  # type: ignore[operator]


def test_each_budget_has_its_own_growing_context() -> None:
    weaver = ContextWeaver()
    weaver.begin(ROOT)
    for s in steps(30):
        weaver.add_step(s)
        small, large = weaver.context(max_tokens=2500), weaver.context(max_tokens=50_000)
    assert small.tokens <= 2500 and large.tokens == large.full_history_tokens
    assert weaver.context(max_tokens=2500).messages == small.messages


def test_per_step_mode_re_weaves_every_context() -> None:
    contexts = replay(ContextWeaver(WeaverConfig(mode="per_step", selector="recency")), 20, None)
    assert "Old environment output" in contexts[-1].text()
    assert contexts[-1].compressed and not any(c.compacted for c in contexts)


def test_marks_out_of_order_are_a_clear_error() -> None:
    with pytest.raises(ValueError, match="low_water .* must not exceed high_water"):
        WeaverConfig(high_water=0.5, low_water=0.8)
