"""The truth of the state-across-a-cut probes, from the trajectory alone."""

from __future__ import annotations

from contextweaver.eval.state_probes import edit_old_texts, state_truth
from contextweaver.formats.base import Trajectory
from contextweaver.records import Step

FAIL = "FAILED tests/test_calc.py::test_add - assert 1 == 5\n==== 1 failed, 1 passed in 0.05s ====\n"


def run(*steps: Step) -> Trajectory:
    return Trajectory([{"role": "user", "content": "Fix calc.py."}], list(steps))


def test_the_trail_holds_edited_created_and_deleted_files_and_failing_tests_by_their_printed_name() -> None:
    truth = state_truth(
        run(
            Step("", "cat <<'EOF' > reproduce.py\nprint(1)\nEOF", ""),
            Step("", "sed -i 's/a - b/a + b/' src/calc.py", ""),
            Step("", "python -m pytest tests/test_calc.py", FAIL),
            Step("", "rm reproduce.py && git rm -q docs/old.md", ""),
        )
    )
    assert truth[2].changed == {"reproduce.py", "src/calc.py"} and truth[2].failing == frozenset()
    assert truth[3].failing == {"test_add"}
    assert truth[4].changed == {"reproduce.py", "src/calc.py", "docs/old.md"}


def test_freshness_asks_only_for_old_texts_an_earlier_step_shows() -> None:
    view = Step("", "grep -n 'return a - b' src/calc.py", "12:    return a - b\n")
    edits = run(
        view,
        Step("", "sed -i 's/return a - b/return a + b/' src/calc.py", ""),  # shown by the grep
        Step("", "sed -i '40i\\    pass' src/calc.py", ""),  # a line number no output printed
        Step("", "sed -i 's/print.*/print(2)/' src/calc.py", ""),  # a regex: no text holds it
        Step("", "sed -i 's/return a + b/return b + a/' src/calc.py", ""),  # the agent's own earlier text
    )
    assert edit_old_texts(edits) == {2: {"return a - b"}, 5: {"return a + b"}}
