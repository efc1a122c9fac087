"""A replay step costs what changed, and every number equals the whole-context computation it replaces:
contexts (`Reweave` vs `weave`), evidence found and the shared prefix (`ContextTrack` vs `found_in` and
`common_prefix_tokens`), the provider cache (`PrefixCache` vs the plain set of seen prefixes)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from tests.conftest import reference_cache

from contextweaver.eval.context_track import ContextTrack
from contextweaver.eval.evidence import covered_in, found_in, next_step_evidence
from contextweaver.eval.lockstep import Lockstep
from contextweaver.eval.metrics import common_prefix_tokens
from contextweaver.eval.replay import replay_steps
from contextweaver.formats.base import Trajectory
from contextweaver.prompt_cache import PRICES, CostMeter, PrefixCache, TokenCounts
from contextweaver.records import Message, Step
from contextweaver.strategies import REPLAY_DEFAULT, build_strategy
from contextweaver.weaving.weave import weave

ROOT = [{"role": "system", "content": "agent"}, {"role": "user", "content": "fix helper calls"}]


def synthetic_run(n: int, seed: int = 3) -> Trajectory:
    """Reads naming helpers, edits, test runs that flip the TEST STATUS line, a person's message and
    steps with tool calls: every way a context changes from one step to the next."""
    rng = random.Random(seed)
    steps = []
    for i in range(1, n + 1):
        path = f"pkg/mod_{rng.randrange(12)}.py"
        kind = rng.random()
        if i == 9:
            steps.append(Step(observation="keep helper_3 and 'legacy mode' working", kind="user"))
        elif kind < 0.45:
            lines = "\n".join(f"{k:>3}  x = helper_{rng.randrange(60)}(arg_{k})" for k in range(12))
            steps.append(Step(f"Where is helper_{rng.randrange(60)} used?", f"nl -ba {path}", lines))
        elif kind < 0.65:
            call = {"id": f"c{i}", "type": "function",
                    "function": {"name": "bash", "arguments": json.dumps({"command": f"cat {path}"})}}  # fmt: skip
            messages = ({"role": "assistant", "content": "read it", "tool_calls": [call]},
                        {"role": "tool", "tool_call_id": f"c{i}", "content": f"helper_{i} = 1\n'legacy mode'"})  # fmt: skip
            steps.append(Step("read it", f"cat {path}", messages[1]["content"], messages=messages))
        elif kind < 0.8:
            steps.append(Step(f"Patch {path}.", f"sed -i 's/helper_{i}/helper_{i + 1}/' {path}", ""))
        else:
            outcome = "1 failed, 41 passed in 1.02s" if rng.random() < 0.5 else "42 passed in 0.98s"
            steps.append(Step("Run the tests.", "python -m pytest -q tests/", f"....F...\n{outcome}"))
    return Trajectory(list(ROOT), steps)


def reference_weave(strategy: Any) -> Any:
    """The context woven anew from the whole history, as before contexts were updated per step."""
    if hasattr(strategy, "graph"):
        status = strategy.tracker.status_line(strategy.config.status_line_chars)
        graph = strategy.graph
        return weave(
            graph.node(0),
            graph.nodes[1:],
            strategy._plan(None, False),
            strategy=strategy.name,
            status_line=status,
        )
    return weave(strategy.nodes[0], strategy.nodes[1:], strategy.plan(), strategy=strategy.name)


@pytest.mark.parametrize("name", ["cw-select", "cw-paper", "sliding_window", "masking", "full", "bm25"])
def test_updated_context_equals_the_context_woven_anew(name: str) -> None:
    strategy = build_strategy(name).strategy
    for replayed in replay_steps(synthetic_run(60), strategy):
        got, want = replayed.context, reference_weave(strategy)
        assert got.messages == want.messages
        assert (got.decisions, got.tokens, got.full_history_tokens) == (
            want.decisions,
            want.tokens,
            want.full_history_tokens,
        )
        assert (got.notes, got.test_status) == (want.notes, want.test_status)


def test_a_callers_context_is_its_own_copy() -> None:
    strategy = build_strategy("sliding_window").strategy
    strategy.begin(ROOT)
    strategy.add_step(Step("look", "ls", "a.py"))
    strategy.context().messages[-1]["content"] = "changed by a caller"
    strategy.add_step(Step("look again", "ls -a", "b.py"))
    assert "changed by a caller" not in [m["content"] for m in strategy.context().messages]


def edited_contexts(seed: int) -> list[list[Message]]:
    """Contexts that grow, change in the middle, return to an earlier state, repeat an object, or are
    copied value for value: what a replay's tracking must follow exactly."""
    rng = random.Random(seed)
    pool = [
        {"role": "user", "content": f"helper_{i} line {i * 37}\n'legacy mode'" * (i % 3 + 1)}
        for i in range(10)
    ]
    contexts: list[list[Message]] = [list(ROOT)]
    for _ in range(40):
        now = list(contexts[-1])
        move = rng.random()
        if move < 0.35:
            now.append(rng.choice(pool))
        elif move < 0.55 and len(now) > 2:
            now[rng.randrange(2, len(now))] = rng.choice(pool)
        elif move < 0.65 and len(contexts) > 3:
            now = list(contexts[rng.randrange(len(contexts))])
        elif move < 0.75:
            now = [dict(m) for m in now]
        elif move < 0.85:
            now.insert(2, {"role": "user", "content": f"TEST STATUS: {rng.randrange(3)} failed"})
        elif len(now) > 2:
            del now[rng.randrange(2, len(now)) :]
        contexts.append(now)
    return contexts


@pytest.mark.parametrize("seed", range(6))
def test_tracking_and_cache_equal_the_whole_context_computation(seed: int) -> None:
    contexts = edited_contexts(seed)
    asked = [frozenset({"helper_3", "legacy mode", "111", "helper_9", "line 74\nhelper_2"}), frozenset()]
    track, cache, tokens = ContextTrack(set().union(*asked) - {"111"}), PrefixCache(), TokenCounts().of
    expected = reference_cache(contexts)
    previous = None
    for messages, (total, shared) in zip(contexts, expected, strict=True):
        track.update(messages)
        for items in asked:  # "111" is not tracked: found in the text, as an item with a line break
            assert track.found(items) == found_in(items, messages)
        want = None if previous is None else common_prefix_tokens(previous, messages, tokens)
        assert track.shared_tokens == want
        use = cache.request(messages)
        assert (use.tokens, use.shared) == (total, shared)
        assert use.cached == {p: PRICES[p].cached(shared) for p in PRICES}
        previous = messages


def test_lockstep_totals_equal_the_reference_computation() -> None:
    trajectory = synthetic_run(40, seed=5)
    lockstep = Lockstep(trajectory, REPLAY_DEFAULT, lambda name: build_strategy(name).strategy)
    evidence = {e.index: e.items for e in next_step_evidence(trajectory)}
    requests: dict[str, list[list[Message]]] = {name: [] for name in REPLAY_DEFAULT}
    hits = dict.fromkeys(REPLAY_DEFAULT, 0)
    meters = {name: CostMeter() for name in REPLAY_DEFAULT}
    for step in lockstep:
        items = evidence.get(step.index + 1, frozenset())
        for name, replayed, hit in zip(REPLAY_DEFAULT, step.steps, step.hits, strict=True):
            copy = [dict(m) for m in replayed.context.messages]  # nothing shared with the last step
            assert hit == covered_in(items, copy)
            hits[name] += hit
            requests[name].append(copy)
            meters[name].add(copy, replayed.context.full_history_tokens)
    for name, total in lockstep.totals.items():
        assert total.hits == hits[name]
        assert total.meter.cost() == meters[name].cost()
        cached = sum(PRICES["anthropic"].cached(shared) for _, shared in reference_cache(requests[name]))
        assert total.meter.cached == cached
    assert lockstep.totals["full"].hits == lockstep.totals["full"].items > 0
