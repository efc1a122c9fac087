"""TestTracker: supersession at test level, inferred passes, status line cap, deterministic replay."""

from contextweaver.records import TestStatus, ValidationStatus
from contextweaver.validation import TestTracker

START = "============================= test session starts ==============================\n"


def run(lines: str, summary: str) -> str:
    return START + lines + f"==== {summary} in 0.1s ====\n"


FAIL_AB = run("t.py::test_a FAILED\nt.py::test_b FAILED\n", "2 failed")
PASS_A = run("t.py::test_a PASSED\n", "1 passed")
PASS_B = run("t.py::test_b PASSED\n", "1 passed")


def test_node_is_superseded_once_all_its_failures_pass() -> None:
    tracker = TestTracker()
    assert tracker.observe(1, "pytest -v", FAIL_AB).status is ValidationStatus.FAILED
    assert tracker.observe(2, "ls", "a.py b.py").supersedes == ()
    assert tracker.observe(3, "pytest -v t.py::test_a", PASS_A).supersedes == ()
    verdict = tracker.observe(4, "pytest -v t.py::test_b", PASS_B)
    assert verdict.supersedes == (1,) and verdict.status is ValidationStatus.PASSED
    assert tracker.latest["t.py::test_b"] == (TestStatus.PASSED, 4)


def test_similar_commands_alone_never_supersede() -> None:
    tracker = TestTracker()
    tracker.observe(1, "pytest -v", FAIL_AB)
    assert tracker.observe(2, "pytest -v", run("t.py::test_c PASSED\n", "1 passed")).supersedes == ()


def test_quiet_run_with_a_clean_file_fixes_its_earlier_failure() -> None:
    tracker = TestTracker()
    tracker.observe(1, "pytest -q", "FAILED t.py::test_a - assert 1 == 2\n1 failed, 3 passed in 0.1s\n")
    verdict = tracker.observe(
        2, "pytest", START + "t.py ....                   [100%]\n==== 4 passed in 0.1s ====\n"
    )
    assert verdict.supersedes == (1,)
    deselected = START + "t.py ..   [100%]\n==== 2 passed, 2 deselected in 0.1s ====\n"
    other = TestTracker()
    other.observe(1, "pytest -q", "FAILED t.py::test_a - x\n1 failed in 0.1s\n")
    assert other.observe(2, "pytest -k b", deselected).supersedes == ()


def test_status_line_lists_failures_first_and_caps_long_states() -> None:
    tracker = TestTracker()
    assert tracker.status_line() is None
    tracker.observe(1, "pytest -v", run("t.py::test_a PASSED\nt.py::test_b FAILED\n", "1 failed, 1 passed"))
    assert tracker.status_line() == "TEST STATUS: ✗ t.py::test_b: FAILED, ✓ t.py::test_a: PASSED"
    many = "".join(f"t.py::test_{i} {'FAILED' if i % 50 == 0 else 'PASSED'}\n" for i in range(1000))
    tracker.observe(2, "pytest -v", run(many, "20 failed, 980 passed"))
    line = tracker.status_line(max_chars=200)
    assert line is not None and len(line) <= 200
    assert (
        line.startswith("TEST STATUS: 1002 tests (") and "failing: ✗ t.py::test_b" in line and "more" in line
    )


def test_replay_rebuilds_the_same_state() -> None:
    steps = [(1, "pytest -v", FAIL_AB), (2, "pytest -v", PASS_A), (3, "pytest -v", PASS_B)]
    first, second = TestTracker(), TestTracker()
    verdicts = [first.observe(*step) for step in steps]
    assert verdicts == [second.observe(*step) for step in steps]
    assert first.latest == second.latest and first.status_line() == second.status_line()


QUIET_FAIL = "F....                                                      [100%]\nFAILED tests/test_a.py::test_x - assert 0\n1 failed, 4 passed in 0.1s\n"
QUIET_PASS = ".....                                                      [100%]\n5 passed in 0.1s\n"


def test_quiet_clean_run_of_the_whole_suite_or_the_failing_path_supersedes() -> None:
    for command in ("python -m pytest -q", "python -m pytest -q tests/", "pytest -q tests/test_a.py"):
        tracker = TestTracker()
        tracker.observe(1, "python -m pytest -q", QUIET_FAIL)
        verdict = tracker.observe(2, command, QUIET_PASS)
        assert verdict.supersedes == (1,), command
        assert tracker.latest["tests/test_a.py::test_x"] == (TestStatus.PASSED, 2)


def test_quiet_runs_that_may_not_have_run_the_test_never_supersede() -> None:
    commands = (
        "pytest -q tests/test_b.py",  # another file
        "python -m pytest -q -k fast",  # a subset
        "pytest -q --ignore tests/test_a.py",
        "pytest -q tests/x && pytest -q tests/y",  # two runs, one output: which ran what is unknown
        "make test",  # arguments unknown
    )
    for command in commands:
        tracker = TestTracker()
        tracker.observe(1, "python -m pytest -q", QUIET_FAIL)
        assert tracker.observe(2, command, QUIET_PASS).supersedes == (), command
    skipped = TestTracker()
    skipped.observe(1, "pytest -q", QUIET_FAIL)
    assert skipped.observe(2, "pytest -q", "....s  [100%]\n4 passed, 1 skipped in 0.1s\n").supersedes == ()


def test_a_whole_suite_pass_covers_only_its_own_runners_failures() -> None:
    tracker = TestTracker()
    tracker.observe(1, "go test ./...", "=== RUN   TestA\n--- FAIL: TestA (0.00s)\nFAIL\tacme/a\t0.01s\n")
    assert tracker.observe(2, "pytest -q", QUIET_PASS).supersedes == ()


def test_the_shipped_bugfix_example_supersedes_its_three_failed_runs() -> None:
    from pathlib import Path

    from contextweaver.formats import load_trajectory

    path = Path(__file__).resolve().parents[2] / "src" / "contextweaver" / "examples" / "bugfix.jsonl"
    trajectory = load_trajectory(path)
    tracker = TestTracker()
    superseded: dict[int, int] = {}
    for index, step in enumerate(trajectory.steps, 1):
        verdict = tracker.observe(index, str(step.action), step.observation)
        superseded.update(dict.fromkeys(verdict.supersedes, index))
    assert superseded == {14: 19, 17: 19, 21: 26}
