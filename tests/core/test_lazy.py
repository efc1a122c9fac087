"""Lazy weaving: the history passes through until the budget demands a cut; between cuts the prefix is
byte-stable; a cut weaves once down to the low-water mark and its choices stay frozen."""

from __future__ import annotations

import pytest

from contextweaver.baselines.full import FullHistory
from contextweaver.config import WeaverConfig, load_config
from contextweaver.records import Step, WovenContext
from contextweaver.tokens import count_message
from contextweaver.weaver import ContextWeaver
from contextweaver.weaving.budget import GAP_STEPS, KEEP_STEPS
from contextweaver.weaving.kept_prefix import Before
from tests.core.helpers import ROOT, step

FAILING = "tests/test_pager.py::test_last_page FAILED\n=========== 1 failed, 3 passed in 0.12s ==========="


def steps(n: int) -> list[Step]:
    out = [step(i, lines=25) for i in range(1, n + 1)]
    out[3] = Step("Run the tests.", "python -m pytest -v tests/test_pager.py", FAILING)
    return out


def replay(
    weaver: ContextWeaver | FullHistory, n: int, budget: int | None, root: list[dict[str, str]] = ROOT
) -> list[WovenContext]:
    weaver.begin(root)
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
    config = WeaverConfig(lazy={"high_water": 0.9, "low_water": 0.6})
    contexts = replay(ContextWeaver(config), 40, 3000)
    root = contexts[0].tokens - contexts[0].decisions[0].tokens
    cuts = [i for i, c in enumerate(contexts) if c.compacted]
    assert len(cuts) >= 3, "the run must cross the budget several times"
    for before, after in zip(contexts, contexts[1:], strict=False):
        assert recount(after) == after.tokens <= root + 0.9 * (3000 - root)
        if after.compacted:
            continue
        body = before.messages[:-1] if before.test_status else before.messages
        assert after.messages[: len(body)] == body
    for i in cuts:
        status = count_message(contexts[i].messages[-1]) if contexts[i].test_status else 0
        assert contexts[i].tokens - status <= root + 0.6 * (3000 - root)
        assert any("woven down to 60% of the room above the root" in note for note in contexts[i].notes)


def test_a_large_root_does_not_starve_the_steps_after_a_cut() -> None:
    """The marks are shares of the room above the root: with a root filling half the budget, a cut to
    half the room still leaves the steps a quarter of the budget, not nothing."""
    task = " ".join(f"requirement_{i} must hold for every page" for i in range(180))
    root = [ROOT[0], {"role": "user", "content": task}]
    budget = 3000
    contexts = replay(ContextWeaver(WeaverConfig(lazy={"low_water": 0.5})), 40, budget, root)
    root_tokens = contexts[0].tokens - contexts[0].decisions[0].tokens
    assert 0.4 * budget < root_tokens < 0.6 * budget
    cuts = [c for c in contexts if c.compacted]
    assert cuts
    for cut in cuts:
        status = count_message(cut.messages[-1]) if cut.test_status else 0
        steps_tokens = cut.tokens - status - root_tokens
        assert steps_tokens <= 0.5 * (budget - root_tokens)
        assert steps_tokens > 0.3 * (budget - root_tokens), "the cut must use the room above the root"
    assert all(c.tokens <= budget for c in contexts)


def test_what_a_cut_compressed_stays_compressed_until_the_next_cut() -> None:
    contexts = replay(ContextWeaver(WeaverConfig(lazy={"low_water": 0.5})), 40, 3000)
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
    with pytest.raises(ValueError, match="lazy.low_water .* must not exceed lazy.high_water"):
        WeaverConfig(lazy={"high_water": 0.5, "low_water": 0.8})


def long_steps(n: int, thought_lines: int) -> list[Step]:
    """Steps whose reasoning is longer than their call, as an agent's often is."""
    reasoning = "\n".join(
        f"Reason {j}: the pager may misread page_{j} of the report." for j in range(thought_lines)
    )
    return [
        Step(reasoning, f"grep -n fn_{i} src/part_{i}.py", "\n".join(f"out_{i}_{j}" for j in range(25)))
        for i in range(1, n + 1)
    ]


def replay_steps(config: WeaverConfig, given: list[Step], budget: int) -> list[WovenContext]:
    weaver = ContextWeaver(config)
    weaver.begin(ROOT)
    contexts = []
    for s in given:
        weaver.add_step(s)
        contexts.append(weaver.context(max_tokens=budget))
    return contexts


def root_and_step(given: list[Step]) -> tuple[int, int]:
    """The root's tokens and the first step's, as a weaver counts them."""
    weaver = ContextWeaver(WeaverConfig())
    weaver.begin(ROOT)
    weaver.add_step(given[0])
    return weaver.nodes[0].full_tokens, weaver.nodes[1].full_tokens


def cut_share(context: WovenContext) -> float:
    note = next(n for n in context.notes if n.startswith("woven down to "))
    return float(note.removeprefix("woven down to ").split("%")[0]) / 100


def test_a_cut_keeps_old_calls_without_their_reasoning_rather_than_dropping_them() -> None:
    given = long_steps(60, thought_lines=12)
    contexts = replay_steps(WeaverConfig(), given, 6000)
    cut = [c for c in contexts if c.compacted][-1]
    short = [d for d in cut.decisions if "without its reasoning" in d.reason]
    assert short, "old steps must keep their calls at a cut"
    text = cut.text()
    for d in short:
        assert f"grep -n fn_{d.index} src/part_{d.index}.py" in text
    assert "line(s) of reasoning omitted]" in text
    per_step = ContextWeaver(WeaverConfig(mode="per_step"))
    per_step.begin(ROOT)
    for s in given:
        per_step.add_step(s)
    woven = per_step.context(max_tokens=6000)
    assert "reasoning omitted" not in woven.text(), "the per-step weave is unchanged"
    assert not any(d.mode == "dropped" for d in cut.decisions)
    assert any(d.mode == "dropped" for d in woven.decisions), "without short calls some step is dropped"


def test_the_gap_between_the_marks_holds_two_mean_steps_when_the_room_allows() -> None:
    """Steps large against the gap: the cut goes below the low mark so two mean steps fit before the
    next one, instead of re-cutting (and rewriting the cache) at every step."""
    given = long_steps(40, thought_lines=2)  # about 200 tokens each: the default gap would hold 1.4
    budget = 2000
    contexts = replay_steps(WeaverConfig(), given, budget)
    cuts = [c for c in contexts if c.compacted]
    assert cuts
    for cut in cuts:
        assert 0.7 <= cut_share(cut) < 0.85
    assert all(c.tokens <= budget for c in contexts)
    indices = [k for k, c in enumerate(contexts) if c.compacted]
    assert all(b - a >= 2 for a, b in zip(indices, indices[1:], strict=False)), indices


def test_a_room_of_few_steps_still_gets_a_gap_of_two_steps() -> None:
    """Big steps (the room holds about six): the cut goes down to the floor (70%) so two mean steps fit
    before the next one, rather than re-cutting (and rewriting the cache) at every step; a room smaller
    still, where that would take the cut below the floor, re-cuts at the high mark."""
    given = long_steps(20, thought_lines=2)
    contexts = replay_steps(WeaverConfig(), given, 1500)
    indices = [k for k, c in enumerate(contexts) if c.compacted]
    assert indices and all(0.7 <= cut_share(contexts[k]) < 0.75 for k in indices)
    assert all(b - a >= 2 for a, b in zip(indices, indices[1:], strict=False)), indices
    assert all(c.tokens <= 1500 for c in contexts)
    small = replay_steps(WeaverConfig(), given, 1000)
    assert all(cut_share(c) == 1.0 for c in small if c.compacted)


def test_a_big_room_too_small_for_a_gap_of_two_steps_keeps_a_gap_of_one() -> None:
    """Steps of about a quarter of a room of 4k+ tokens: a two-step gap would go below the floor, so the
    cut leaves one step's gap (a cut every other step) instead of re-cutting at every step."""
    given = long_steps(24, thought_lines=70)
    root, first = root_and_step(given)
    budget = int(root + 4.2 * first)
    contexts = replay_steps(WeaverConfig(), given, budget)
    indices = [k for k, c in enumerate(contexts) if c.compacted]
    assert budget - root >= 4000 and len(indices) > 3
    assert all(0.6 <= cut_share(contexts[k]) < 0.8 for k in indices[2:])
    assert all(b - a >= 2 for a, b in zip(indices[2:], indices[3:], strict=False)), indices
    assert all(c.tokens <= budget for c in contexts)


def test_a_room_too_small_for_a_gap_of_two_steps_is_cut_at_the_high_mark() -> None:
    """When no gap of two steps leaves 45% of the room, every step re-cuts anyway: keep it all."""
    given = long_steps(20, thought_lines=2)
    contexts = replay_steps(WeaverConfig(), given, 700)
    cuts = [c for c in contexts if c.compacted]
    assert cuts and all(cut_share(c) == 1.0 for c in cuts)


def test_the_old_setting_names_still_work_with_a_warning() -> None:
    with pytest.warns(FutureWarning) as caught:
        config = WeaverConfig(low_water=0.6, cut_calls_share=0.1)
    assert (config.lazy.low_water, config.lazy.calls_share) == (0.6, 0.1)
    assert sorted(str(w.message).split(" is now ")[0] for w in caught) == [
        "setting 'cut_calls_share'",
        "setting 'low_water'",
    ]
    with pytest.warns(FutureWarning, match=r"'select_weights' is now `select.weights`"):
        assert load_config(overrides=["select_weights=null"]).select.weights is None


def test_a_cut_plans_with_the_cut_selector_and_per_step_weaving_with_the_selector() -> None:
    given = long_steps(30, thought_lines=2)
    cut = [c for c in replay_steps(WeaverConfig(), given, 2000) if c.compacted][-1]
    assert any(n.startswith("select: ") for n in cut.notes), cut.notes
    own = [c for c in replay_steps(WeaverConfig(lazy={"selector": None}), given, 2000) if c.compacted][-1]
    assert any(n.startswith("adaptive: ") for n in own.notes) and not any(
        n.startswith("select: ") for n in own.notes
    )
    per_step = ContextWeaver(WeaverConfig(mode="per_step"))
    assert per_step.cut_selector is per_step.selector


def calls_held_at_cuts(given: list[Step], budget: int) -> tuple[list[bool], list[float]]:
    """Whether each cut held room for older calls, and the share of the room it wove down to."""
    weaver = ContextWeaver(WeaverConfig())
    weaver.begin(ROOT)
    asked: list[bool] = []
    shares: list[float] = []
    original = weaver.weaving._cut

    def record(target: float, hold_calls: bool, before: Before | None) -> WovenContext:
        asked.append(hold_calls)
        shares.append(weaver.lazy(budget).low_share())
        return original(target, hold_calls, before)

    weaver.weaving._cut = record  # type: ignore[method-assign]
    for s in given:
        weaver.add_step(s)
        weaver.context(max_tokens=budget)
    return asked, shares


def test_a_cut_with_a_gap_holds_room_for_older_calls_and_one_at_the_high_mark_does_not() -> None:
    """Big steps in a small room re-cut at the high mark: there the newest outputs need all of it."""
    asked, shares = calls_held_at_cuts(long_steps(20, thought_lines=2), 1000)
    assert asked and all(share == 1.0 for share in shares) and not any(asked)
    asked, shares = calls_held_at_cuts(long_steps(60, thought_lines=2), 4000)
    assert asked and all(share < 1.0 for share in shares) and all(asked)


def cuts_in_a_small_room(room_steps: float, gap: float) -> tuple[list[WovenContext], list[float]]:
    """Forty steps, one big to two small, replayed at a budget whose room holds `room_steps` mean steps,
    and each cut's share."""
    given = [
        Step(f"step {i}", f"cat src/part_{i}.py", "\n".join(f"row_{i}_{j} = {j}" for j in range(lines)))
        for i, lines in enumerate([40 if i % 3 == 0 else 1 for i in range(40)], start=1)
    ]
    weaver = ContextWeaver(WeaverConfig())
    weaver.begin(ROOT)
    for s in given:
        weaver.add_step(s)
    root = weaver.nodes[0].full_tokens
    mean = sum(n.full_tokens for n in weaver.nodes[1:]) / len(given)
    budget = int(root + room_steps * mean)
    contexts = replay_steps(WeaverConfig(lazy={"small_room_gap": gap}), given, budget)
    assert all(c.tokens <= budget for c in contexts)
    return contexts, [cut_share(c) for c in contexts if c.compacted]


def test_a_small_room_cuts_at_the_high_mark_unless_the_user_asks_for_a_gap() -> None:
    """At the high mark nearly every step cuts and rewrites the room; `small_room_gap` trades evidence for
    appended (cached) steps where the room holds SMALL_ROOM_STEPS mean steps or more, and nowhere smaller."""
    default, shares = cuts_in_a_small_room(5, 0.0)
    assert shares and all(share == 1.0 for share in shares)
    gapped, shares = cuts_in_a_small_room(5, 0.5)
    assert shares and all(share == pytest.approx(1 - 0.5 / 5, abs=0.03) for share in shares[2:]), shares
    assert sum(c.compacted for c in gapped) < sum(c.compacted for c in default)
    appended = [b for a, b in zip(gapped, gapped[1:], strict=False) if a.compacted and not b.compacted]
    assert appended  # a step after a cut that fit in the gap
    _, shares = cuts_in_a_small_room(2.5, 0.5)
    assert shares and all(share == 1.0 for share in shares)


def test_steps_too_big_for_a_one_step_gap_cut_halfway_between_the_marks_not_at_the_high_mark() -> None:
    """Where a mean step takes over 40% of a room of 4k+ tokens, cutting at the high mark made every step
    cut and write the whole room again; halfway between the marks, smaller steps pass without a cut."""
    sizes = [370 if i % 3 else 12 for i in range(1, 31)]  # ~3k tokens twice, then ~0.1k: 2k on average
    given = [
        Step(f"step {i}", f"cat src/part_{i}.py", "\n".join(f"row_{i}_{j} = {j}" for j in range(lines)))
        for i, lines in enumerate(sizes, start=1)
    ]
    budget = 4900  # a room of about 4.8k above the small root
    _, shares = calls_held_at_cuts(given, budget)
    assert shares and all(share == pytest.approx(0.925) for share in shares[3:])
    contexts = replay_steps(WeaverConfig(), given, budget)
    cuts = sum(c.compacted for c in contexts[5:])
    assert 0 < cuts < len(contexts[5:])  # not every step
    assert all(c.tokens <= budget for c in contexts)


def test_a_room_of_many_steps_appends_about_gap_steps_between_cuts() -> None:
    """A room of 25+ mean steps (the budget a refusal suggests holds ROOM_STEPS typical ones): a cut keeps
    KEEP_STEPS and leaves a gap of GAP_STEPS, so cuts come about every GAP_STEPS steps, not every two."""
    given = long_steps(120, thought_lines=2)
    root, step = root_and_step(given)
    budget = int(root + 25 * step)
    contexts = replay_steps(WeaverConfig(), given, budget)
    indices = [k for k, c in enumerate(contexts) if c.compacted]
    gaps = [b - a for a, b in zip(indices, indices[1:], strict=False)]
    assert len(indices) > 3 and min(gaps) >= GAP_STEPS - 1, gaps
    assert all(c.tokens <= budget for c in contexts)
    kept = [contexts[k].tokens - root for k in indices]
    assert min(kept) >= (KEEP_STEPS - 1) * step, (kept, step)
