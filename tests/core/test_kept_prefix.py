"""A cut keeps the last cut's messages up to the first step whose form it must change (`weaving/kept_prefix.py`)."""

from __future__ import annotations

import json
import pathlib
import re
from dataclasses import dataclass, replace

import pytest

import contextweaver
from contextweaver.config import WeaverConfig
from contextweaver.formats import load_trajectory
from contextweaver.prompt_cache import PRICES, PrefixCache
from contextweaver.records import Step, WovenContext
from contextweaver.tokens import count_message
from contextweaver.weaver import ContextWeaver
from contextweaver.weaving.kept_prefix import HOLDS, SHOWN, Before
from tests.core.helpers import ROOT

SHIPPED = pathlib.Path(contextweaver.__file__).parent / "examples" / "bugfix.jsonl"


@dataclass
class Cut:
    before: Before | None
    plain: WovenContext
    kept: WovenContext
    target: float


def shipped_cuts(budget: int) -> tuple[list[Cut], list[WovenContext]]:
    run = load_trajectory(SHIPPED)
    return cuts_of(run.steps, budget, run.root)


def cuts_of(
    given: list[Step], budget: int, root: list[dict[str, str]] = ROOT
) -> tuple[list[Cut], list[WovenContext]]:
    """Every cut of a replay, with the cut as woven without the last one (`plain`) and as sent (`kept`)."""
    weaver = ContextWeaver(WeaverConfig())
    weaver.begin(root)
    original = weaver.weaving._cut
    cuts: list[Cut] = []

    def record(target: float, hold_calls: bool, before: Before | None) -> WovenContext:
        plain = original(target, hold_calls, None)
        kept = original(target, hold_calls, before)
        cuts.append(
            Cut(before, plain, replace(kept, messages=list(kept.messages)), target)
        )  # later steps extend it
        return kept

    weaver.weaving._cut = record  # type: ignore[method-assign]
    contexts = []
    for s in given:
        weaver.add_step(s)
        contexts.append(weaver.context(max_tokens=budget))
    return cuts, contexts


def keeps(context: WovenContext) -> bool:
    return any(n.startswith("kept as the last cut left it") for n in context.notes)


def shown(context: WovenContext) -> set[int]:
    return {d.index for d in context.decisions if HOLDS[d.mode] == SHOWN}


def note(context: WovenContext) -> str:
    return next(
        str(m["content"]) for m in context.messages if str(m.get("content")).startswith("[ContextWeaver")
    )


@pytest.mark.parametrize("budget", [1500, 1800])
def test_a_cut_keeps_the_last_cuts_bytes_and_shows_every_output_its_own_weave_shows(budget: int) -> None:
    cuts, _ = shipped_cuts(budget)
    kept = [c for c in cuts if keeps(c.kept)]
    assert len(kept) >= 4, "a room of a few steps: cuts keep part of the last one"
    for cut in kept:
        assert cut.before is not None and cut.kept.layout is not None
        boundary = int(re.search(r"before step (\d+)", " ".join(cut.kept.notes)).group(1))  # type: ignore[union-attr]
        end = min(
            (s for i, s in cut.kept.layout.starts.items() if i >= boundary), default=cut.kept.layout.end
        )
        assert cut.kept.messages[:end] == list(cut.before.messages[:end])
        assert cut.kept.tokens <= cut.target
        assert shown(cut.plain) <= shown(cut.kept)
        newest = max(d.index for d in cut.plain.decisions)
        assert cut.kept.messages[cut.kept.layout.starts[newest]:] == cut.plain.messages[cut.plain.layout.starts[newest]:] \
            or note(cut.kept) != note(cut.plain)  # fmt: skip


def test_its_layout_and_decisions_say_where_every_step_it_holds_lies() -> None:
    cuts, _ = shipped_cuts(1500)
    for cut in cuts:
        context = cut.kept
        assert context.layout is not None and context.taken is not None
        held = {d.index for d in context.decisions if d.mode != "dropped"}
        assert held == set(context.layout.starts) == {d.index for d in context.taken}
        assert sum(count_message(m) for m in context.messages) == context.tokens
        ends = sorted([*context.layout.starts.values(), context.layout.end])
        for (index, start), end in zip(
            sorted(context.layout.starts.items(), key=lambda x: x[1]), ends[1:], strict=True
        ):
            step = next(d for d in context.taken if d.index == index)
            assert sum(count_message(m) for m in context.messages[start:end]) == step.tokens, index


def listed(text: str) -> set[int] | int:
    """The steps a note lists as left out, or only how many in its least form."""
    ranges = re.search(r"steps omitted: ([\d, -]+) \(", text)
    if ranges is None:
        counted = re.search(r"(\d+) of \d+", text)
        return int(counted.group(1)) if counted else 0
    steps: set[int] = set()
    for part in ranges.group(1).split(", "):
        first, _, last = part.partition("-")
        steps.update(range(int(first), int(last or first) + 1))
    return steps


def test_the_note_lists_every_step_the_context_leaves_out_and_no_output_it_shows() -> None:
    """A step the cut left out but the last cut named keeps its placeholder: the note still lists it (its
    output is out of view); every other step it lists is out of the context."""
    cuts, _ = shipped_cuts(1500)
    checked = 0
    for cut in cuts:
        modes = {d.index: d.mode for d in cut.kept.decisions}
        left_out = {i for i, mode in modes.items() if mode == "dropped"}
        said = listed(note(cut.kept))
        if isinstance(said, int):
            assert said >= len(left_out)
            continue
        assert left_out <= said and all(modes[i] == "compressed" for i in said - left_out)
        checked += said != left_out
    assert checked, "a placeholder the cut would have dropped was kept"


def bill(contexts: list[WovenContext]) -> float:
    cache = PrefixCache((PRICES["anthropic"],))
    return sum(cache.request(c.messages).billed["anthropic"] for c in contexts)


def plain_replay(given: list[Step], budget: int, root: list[dict[str, str]]) -> list[WovenContext]:
    """The replay with every cut woven anew, as before the last one was kept."""
    weaver = ContextWeaver(WeaverConfig())
    weaver.begin(root)
    original = weaver.weaving._cut
    weaver.weaving._cut = lambda target, hold, before: original(target, hold, None)  # type: ignore[method-assign]
    contexts = []
    for s in given:
        weaver.add_step(s)
        contexts.append(weaver.context(max_tokens=budget))
    return contexts


@pytest.mark.parametrize("budget", [1500, 1800])
def test_frequent_cuts_bill_less_than_cuts_woven_anew(budget: int) -> None:
    """The point of it, on the shipped run: cuts whose prefix the cache holds are billed less."""
    run = load_trajectory(SHIPPED)
    cuts, contexts = cuts_of(run.steps, budget, run.root)
    assert sum(keeps(c.kept) for c in cuts) >= 2
    assert bill(contexts) < bill(plain_replay(run.steps, budget, run.root))


def test_a_restored_lazy_context_keeps_the_same_prefix_at_its_next_cut() -> None:
    """A reopened session (the proxy's store saves `state()` as JSON) cuts as the session it continues."""
    run = load_trajectory(SHIPPED)
    given = run.steps
    weaver = ContextWeaver(WeaverConfig())
    weaver.begin(run.root)
    for s in given[:13]:
        weaver.add_step(s)
        weaver.context(max_tokens=1500)
    state = json.loads(json.dumps(weaver.lazy(1500).state()))
    again = ContextWeaver(WeaverConfig())
    again.begin(run.root)
    for s in given[:13]:
        again.add_step(s)
    again.lazy(1500).restore(state)
    kept = 0
    for s in given[13:]:
        weaver.add_step(s)
        again.add_step(s)
        context = weaver.context(max_tokens=1500)
        assert again.context(max_tokens=1500).messages == context.messages
        kept += keeps(context)
    assert kept
