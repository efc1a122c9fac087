"""ValidationDetector: labels anchored to runner formats; the Python-traceback rule."""

from contextweaver.records import ValidationStatus
from contextweaver.validation import TestTracker

CRASH = (
    '<returncode>1</returncode>\n<output>\nTraceback (most recent call last):\n  File "repro.py", line 3\n'
)
CRASH += "KeyError: 'id'\n</output>"


def label(command: str, observation: str) -> ValidationStatus:
    return TestTracker().observe(1, command, observation).status


def test_bare_error_words_are_unknown() -> None:
    text = "<returncode>0</returncode><output>grep: error handling docs\nERROR: nothing\n</output>"
    assert label("grep -r error docs", text) is ValidationStatus.UNKNOWN


def test_script_traceback_with_nonzero_exit_fails() -> None:
    verdict = TestTracker().observe(1, "python repro.py", CRASH)
    assert verdict.status is ValidationStatus.FAILED and "KeyError" in verdict.reason


def test_traceback_rule_needs_python_command_exit_code_and_final_exception() -> None:
    assert label("cat log.txt", CRASH) is ValidationStatus.UNKNOWN
    assert label("python repro.py", CRASH.replace(">1<", ">0<")) is ValidationStatus.UNKNOWN
    handled = CRASH.replace("KeyError: 'id'\n", "KeyError: 'id'\nretrying... done\n")
    assert label("python repro.py", handled) is ValidationStatus.UNKNOWN


def test_passed_needs_a_complete_run_with_a_pass() -> None:
    assert label("pytest", "===== 3 passed in 0.1s =====\n") is ValidationStatus.PASSED
    assert label("pytest", "===== no tests ran in 0.1s =====\n") is ValidationStatus.UNKNOWN
    assert label("pytest", "===== 1 failed, 3 passed in 0.1s =====\n") is ValidationStatus.FAILED


def test_a_runner_crash_needs_the_runner_command_and_no_clean_exit() -> None:
    crash = (
        "Traceback (most recent call last):\n"
        '  File "/repo/bin/test", line 9, in <module>\n'
        "    import sympy\n"
        "ImportError: cannot import name 'Mul'\n"
    )
    tracker = TestTracker()
    assert tracker.observe(1, "bin/test sympy/core", crash).status is ValidationStatus.FAILED
    assert tracker.observe(2, "cat notes.txt", crash).status is ValidationStatus.UNKNOWN
    exited_zero = f"<returncode>0</returncode>\n<output>\n{crash}</output>"
    assert tracker.observe(3, "bin/test sympy/core", exited_zero).status is ValidationStatus.UNKNOWN


def test_a_traceback_inside_the_output_is_no_crash() -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "x.py", line 1, in <module>\n'
        "ValueError: bad\n"
        "retrying with defaults\n"
    )
    assert TestTracker().observe(1, "pytest -q", text).status is ValidationStatus.UNKNOWN
