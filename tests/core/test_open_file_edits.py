"""SWE-agent 0.x edits the file it has open: `open`, then `edit N:M` naming no file. The working-state note
(the weaver's facts) and the evaluator's truth (eval/edits.py, read from the tool's documented commands)
each see those edits, by different routes, and agree."""

from __future__ import annotations

from contextweaver.config import WeaverConfig
from contextweaver.eval.edits import Edit, trajectory_edits
from contextweaver.eval.state_probes import state_truth
from contextweaver.formats.base import Trajectory
from contextweaver.records import Step
from contextweaver.weaver import ContextWeaver

ROOT = [
    {"role": "system", "content": "You edit files with open and edit."},
    {"role": "user", "content": "Fix git.py"},
]
SHOWN = (
    "[File: /repo/pydriller/git.py (320 lines total)]\n(280 more lines above)\n300:    def get_commit(self):"
)
UPDATED = f"{SHOWN}\n301:        return self.repo\nFile updated. Please review the changes and make sure they are correct."
REFUSED = (
    "Your proposed edit has introduced new syntax error(s). Please read this error message carefully.\n\n"
    f"This is how your edit would have looked if applied\n{SHOWN}"
)


def run(*steps: Step) -> Trajectory:
    return Trajectory(root=ROOT, steps=list(steps), source="swe-agent 0.x", format="sweagent")


def edit(observation: str, first: str = "edit 300:316") -> Step:
    return Step("Change the return.", f"{first}\n        return self.repo\nend_of_edit", observation)


def woven_files(trajectory: Trajectory) -> list[frozenset[str]]:
    weaver = ContextWeaver(WeaverConfig())
    weaver.begin(ROOT)
    return [weaver.add_step(step).facts.edited_files for step in trajectory.steps]


def test_an_edit_of_the_open_file_is_a_change_of_that_file_as_the_agent_wrote_it() -> None:
    trajectory = run(
        Step("Look.", "open pydriller/git.py", SHOWN),
        Step("Look at the tests.", "ls tests", "test_git.py"),
        edit(UPDATED),
        edit("", first="edit"),  # no range, an empty output: still the open file
    )
    assert woven_files(trajectory) == [frozenset(), frozenset(), {"pydriller/git.py"}, {"pydriller/git.py"}]
    assert trajectory_edits(trajectory)[2:] == [
        [Edit("pydriller/git.py", ("300", "316"))],
        [Edit("pydriller/git.py")],
    ]
    assert state_truth(trajectory)[3].changed == {"pydriller/git.py"}


def test_an_edit_the_linter_refused_changed_nothing() -> None:
    trajectory = run(Step("Look.", "open pydriller/git.py", SHOWN), edit(REFUSED))
    assert woven_files(trajectory) == [frozenset(), frozenset()]
    assert trajectory_edits(trajectory)[1] == []


def test_create_writes_the_file_and_makes_it_the_open_one() -> None:
    created = "[File: /repo/reproduce.py (1 lines total)]\n1:"
    written = "[File: /repo/reproduce.py (3 lines total)]\n1:import pydriller\nFile updated."
    trajectory = run(Step("A script.", "create reproduce.py", created), edit(written, first="edit 1:1"))
    assert woven_files(trajectory) == [{"reproduce.py"}, {"reproduce.py"}]
    assert [[e.path for e in edits] for edits in trajectory_edits(trajectory)] == [
        ["reproduce.py"],
        ["reproduce.py"],
    ]


def test_an_edit_with_no_file_opened_in_the_history_names_the_file_its_output_shows() -> None:
    """A history that starts after the `open` (a resumed run): the output's header is all there is."""
    assert woven_files(run(edit(UPDATED))) == [{"/repo/pydriller/git.py"}]
    assert trajectory_edits(run(edit(UPDATED))) == [[]]  # the evaluator follows the documented commands only


def test_the_note_after_a_cut_names_the_edited_file() -> None:
    weaver = ContextWeaver(WeaverConfig())
    weaver.begin(ROOT)
    weaver.add_step(Step("Look.", "open pydriller/git.py", SHOWN))
    weaver.add_step(edit(UPDATED))
    for i in range(30):
        weaver.add_step(Step(f"Read {i}.", f"cat notes_{i}.txt", f"line of notes {i}\n" * 60))
    context = weaver.context(max_tokens=3000)
    notes = [m["content"] for m in context.messages if "files changed so far" in str(m.get("content"))]
    assert len(notes) == 1 and "pydriller/git.py (step 2)" in notes[0], notes


def test_tee_and_undo_edit_are_changes_for_the_note_and_the_evaluator() -> None:
    trajectory = run(
        Step("Save the log.", "python run.py | tee -a out/run.log", "ok"),
        Step(
            "Undo.", "str_replace_editor undo_edit /repo/pkg/mod.py", "Last edit to /repo/pkg/mod.py undone."
        ),
    )
    assert woven_files(trajectory) == [{"out/run.log"}, {"/repo/pkg/mod.py"}]
    assert [[e.path for e in edits] for edits in trajectory_edits(trajectory)] == [
        ["out/run.log"],
        ["/repo/pkg/mod.py"],
    ]
