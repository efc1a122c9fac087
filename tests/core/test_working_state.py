"""The working-state note of a cut: it says what was left out, the files changed and what fails."""

from __future__ import annotations

import pytest

from contextweaver import ContextWeaver, Step, WeaverConfig
from contextweaver.nodes.extract import make_node, root_node
from contextweaver.records import WovenContext
from contextweaver.tokens import count_text
from contextweaver.validation.tracker import TestTracker
from contextweaver.weaving.working_state import WorkingState

PYTEST_FAIL = (
    "============================= test session starts ==============================\n"
    "collected 2 items\n\ntests/test_calc.py .F                                              [100%]\n\n"
    "=========================== short test summary info ============================\n"
    "FAILED tests/test_calc.py::test_add - assert 1 == 5\n========================= 1 failed, 1 passed in 0.05s ========="
    "================\n"
)


def run(config: WeaverConfig, budget: int | None, steps: int = 30) -> list[WovenContext]:
    weaver = ContextWeaver(config)
    weaver.begin(
        [{"role": "system", "content": "You fix bugs."}, {"role": "user", "content": "Fix calc.py."}]
    )
    contexts = []
    for n in range(1, steps + 1):
        if n == 2:
            step = Step(thought="fix", action="sed -i 's/a - b/a + b/' src/calc.py", observation="")
        elif n == 3:
            step = Step(
                thought="test", action="python -m pytest -q tests/test_calc.py", observation=PYTEST_FAIL
            )
        else:
            step = Step(thought=f"look {n}", action=f"cat src/mod_{n}.py", observation=f"line {n}\n" * 120)
        weaver.add_step(step)
        contexts.append(weaver.context(budget))
    return contexts


def note_of(context: WovenContext) -> str | None:
    return next((m["content"] for m in context.messages if isinstance(m.get("content"), str)
                 and m["content"].startswith("[ContextWeaver working state")), None)  # fmt: skip


def test_a_cut_names_what_it_left_out_the_changed_files_and_the_failing_test() -> None:
    contexts = run(WeaverConfig(), 3000)
    last = contexts[-1]
    assert any(d.mode == "dropped" for d in last.decisions)
    note = note_of(last)
    assert note is not None
    assert "steps omitted: " in note and "src/calc.py (step 2)" in note
    assert (
        "failing at step 3 (`python -m pytest -q tests/test_calc.py`): tests/test_calc.py::test_add" in note
    )
    assert last.tokens <= 3000


def test_the_note_is_frozen_with_the_lazy_cut() -> None:
    contexts = run(WeaverConfig(), 3000)
    checked = 0
    for before, after in zip(contexts, contexts[1:], strict=False):
        if not after.compacted and note_of(before) is not None:
            prefix = before.messages[:-1] if before.test_status else before.messages  # the status goes last
            assert after.messages[: len(prefix)] == prefix
            checked += 1
    assert checked


def test_a_cut_writes_its_note_after_the_steps_it_keeps() -> None:
    """The note changes at every cut (it names the step); right after the root it ended the prefix the
    provider's cache serves there, so every cut rewrote every step it kept."""
    contexts = run(WeaverConfig(), 3000)
    cuts = [c for c in contexts if c.compacted]
    assert len(cuts) >= 3
    for cut in cuts:
        status = 1 if cut.test_status else 0
        assert cut.messages[len(cut.messages) - 1 - status]["content"] == note_of(cut)
    root = 2
    shared = [
        next(i for i, (a, b) in enumerate(zip(before.messages, after.messages, strict=False)) if a != b)
        for before, after in zip(cuts, cuts[1:], strict=False)
    ]
    assert max(shared) > root + 1, shared


def test_no_note_without_a_cut_or_when_switched_off() -> None:
    assert all(note_of(c) is None for c in run(WeaverConfig(), None, 12))
    assert all(note_of(c) is None for c in run(WeaverConfig(working_state=False), 3000))


def test_per_step_weaving_writes_it_last_where_rewriting_it_breaks_no_prefix() -> None:
    contexts = run(WeaverConfig(mode="per_step"), 3000)
    note = note_of(contexts[-1])
    assert note is not None and "src/calc.py" in note
    assert contexts[-1].messages[-1]["content"] == note


@pytest.mark.slow
def test_the_note_is_the_same_under_any_hash_seed() -> None:
    """A restarted proxy must write the same bytes: nothing in the note may follow set order."""
    import os
    import subprocess
    import sys

    script = (
        "from contextweaver import ContextWeaver, WeaverConfig\n"
        "from contextweaver.formats import load_trajectory\n"
        "import contextweaver, pathlib\n"
        "run = load_trajectory(pathlib.Path(contextweaver.__file__).parent / 'examples' / 'bugfix.jsonl')\n"
        "weaver = ContextWeaver(WeaverConfig())\nweaver.begin(run.root)\n"
        "for step in run.steps:\n    weaver.add_step(step)\n    context = weaver.context(3000)\n"
        "    print([m['content'] for m in context.messages if str(m.get('content')).startswith('[ContextWeaver')])\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout  # fmt: skip
        for seed in ("1", "2", "3")
    }
    assert len(outputs) == 1 and "fixed so far" in next(iter(outputs))


def state_of(actions: list[str]) -> WorkingState:
    root = root_node([{"role": "user", "content": "Fix it."}])
    return WorkingState(
        [root, *(make_node(i, Step("", a, "ok")) for i, a in enumerate(actions, 1))], TestTracker()
    )


def test_a_deleted_file_is_a_change_with_its_step() -> None:
    state = state_of(["cat <<'EOF' > reproduce.py\nprint(1)\nEOF", "python reproduce.py", "rm reproduce.py"])
    written = state.note([1, 2], 300)
    assert written is not None and "reproduce.py (deleted, step 3)" in written[0]["content"]


def test_a_reverted_file_is_said_reverted_and_a_moved_file_under_its_new_path() -> None:
    state = state_of(["sed -i 's/a - b/a + b/' /testbed/src/calc.py", "git checkout src/calc.py",
                      "mv repro.java tests/Repro.java"])  # fmt: skip
    written = state.note([1, 2, 3], 300)
    assert written is not None
    note = written[0]["content"]
    assert "/testbed/src/calc.py (reverted, step 2)" in note and "tests/Repro.java (step 3)" in note
    assert "repro.java (deleted, step 3)" in note


def test_when_room_is_short_the_marker_and_every_file_survive_in_short_form() -> None:
    paths = [f"src/package/module_{n}/implementation_{n}.py" for n in range(30)]
    state = state_of([f"sed -i 's/a/b/' {path}" for path in paths] + ["ls"] * 10)
    left_out = list(range(1, 36))
    full = state.note(left_out, 2000)
    assert full is not None and "(step 30)" in full[0]["content"] and "- step 35 did" in full[0]["content"]
    short_room = count_text(", ".join(paths)) + 60
    assert short_room < full[1]
    short = state.note(left_out, short_room)
    assert short is not None and short[1] <= short_room
    assert "steps omitted: " in short[0]["content"] and all(path in short[0]["content"] for path in paths)
    assert state.reserve(short_room) >= short[1]  # the reserve holds the short form when the room does
    assert state.note(left_out, 10) is None  # not even the marker fits


def test_a_tiny_room_still_marks_the_cut_and_names_the_latest_files() -> None:
    paths = [f"src/package/module_{n}/implementation_{n}.py" for n in range(30)]
    state = state_of([f"sed -i 's/a/b/' {path}" for path in paths] + ["ls"] * 10)
    left_out = list(range(1, 36))
    least = state.note(left_out, 20)
    assert least is not None and least[0]["content"] == "[ContextWeaver: steps omitted: 35 of 40]"
    some = state.note(left_out, count_text(", ".join(paths)) // 2)
    assert some is not None and paths[-1] in some[0]["content"] and paths[0] not in some[0]["content"]
    assert " older" in some[0]["content"]  # says how many it does not name


def test_the_note_never_takes_what_the_newest_step_needs() -> None:
    """A root that leaves little room: the note may not starve the newest step, which a budget without
    the note holds (it shrinks or goes instead)."""
    task = [{"role": "user", "content": "Fix the bug. " + "Context line. " * 400}]
    budget = root_node(task).full_tokens + 150  # the newest step's least form takes 128
    for config in (WeaverConfig(), WeaverConfig(working_state=False)):
        weaver = ContextWeaver(config)
        weaver.begin(task)
        for n in range(1, 8):
            weaver.add_step(Step(f"look {n}", f"cat src/mod_{n}.py", f"line {n}\n" * 300))
            assert weaver.context(budget).tokens <= budget


def test_every_file_and_every_failing_test_are_named_before_either_gets_its_steps() -> None:
    from contextweaver import boundary

    failed = "".join(
        f"FAILED tests/test_long_module_name.py::test_case_number_{n} - assert 0\n" for n in range(40)
    )
    actions = [f"sed -i 's/a/b/' src/pkg/mod_{n}.py" for n in range(12)] + ["python -m pytest tests"]
    state = state_of(actions)
    boundary.verdict(state.tracker, 13, actions[-1], failed + "==== 40 failed in 1.0s ====\n")
    every = count_text(", ".join(f"tests/test_long_module_name.py::test_case_number_{n}" for n in range(40)))
    written = state.note(list(range(1, 10)), every + count_text(", ".join(actions)) // 2 + 60)
    assert written is not None
    text = written[0]["content"]
    assert all(f"src/pkg/mod_{n}.py" in text for n in range(12)) and "test_case_number_39" in text
    assert all(f"test_case_number_{n}," in text or f"test_case_number_{n}\n" in text for n in range(39))


def test_a_newest_step_trimmed_to_fit_leaves_the_note_its_least_form() -> None:
    """Where the room cannot hold the newest output whole, the note shrinks to its least form (marker,
    recall line, every file changed) and the output keeps what the fuller note would have taken."""
    task = [{"role": "user", "content": "Fix the bug. " + "Context line. " * 400}]
    output = "\n".join(f"{n}: value_{n} = compute(value_{n - 1})" for n in range(400))
    budget = root_node(task).full_tokens + 700
    weaver = ContextWeaver(WeaverConfig())
    weaver.begin(task)
    weaver.add_step(Step("fix", "sed -i 's/a - b/a + b/' src/calc.py", ""))
    for n in range(2, 6):
        weaver.add_step(Step(f"look {n}", f"cat src/mod_{n}.py", output))
    context = weaver.context(budget)
    newest = context.decisions[-1]
    assert newest.index == 5 and newest.mode == "trimmed"
    note = next(m["content"] for m in context.messages if str(m.get("content")).startswith("[ContextWeaver"))
    assert note.startswith("[ContextWeaver: steps omitted: ") and "src/calc.py" in note
    assert "contextweaver recall" in note and "- step " not in note  # the recall line, no trace
    least = WeaverConfig(working_state=False)
    bare = ContextWeaver(least)
    bare.begin(task)
    bare.add_step(Step("fix", "sed -i 's/a - b/a + b/' src/calc.py", ""))
    for n in range(2, 6):
        bare.add_step(Step(f"look {n}", f"cat src/mod_{n}.py", output))
    without = bare.context(budget)
    kept, kept_without = (
        count_text(str(next(m for m in reversed(c.messages) if m.get("content") != note)["content"]))
        for c in (context, without)
    )
    assert kept_without - kept <= count_text(note) + 8  # the output gave up the least note only
