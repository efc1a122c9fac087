"""pytest -v lines broken by a test's own output (`-s`, or output written past the capture): the status
word ends a later line, and the test is still counted. Built from real pytest runs of a small suite,
89 tests of which a few print: the TEST STATUS line's count is pytest's own."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from contextweaver.validation import TestTracker

SUITE = """
import sys
import pytest


@pytest.mark.parametrize("n", range(84))
def test_quiet(n):
    assert n >= 0


def test_prints_without_newline():
    print("progress 3/3", end="")


def test_prints_lines():
    print("\\nfirst line\\nsecond line")


def test_prints_a_status_word_then_fails():
    print("step PASSED")
    assert False


def test_writes_to_stderr():
    sys.stderr.write("warning: slow PASSED\\n")


class TestK:
    def test_prints_in_a_class(self):
        print("in class")
"""


def run_pytest(tmp_path: Path, *flags: str) -> str:
    (tmp_path / "test_suite.py").write_text(SUITE)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *flags, "-p", "no:cacheprovider", "test_suite.py"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # as an agent's shell shows them: interleaved
        text=True,
        timeout=120,
    )
    return done.stdout


def pytest_total(output: str) -> int:
    summary = output.rstrip().splitlines()[-1]
    return sum(int(n) for n, word in re.findall(r"(\d+) (passed|failed)", summary))


@pytest.mark.parametrize("flags", [("-v", "-s"), ("-vv", "-s"), ("-v",), ("-v", "--capture=no", "-rA")])
def test_every_test_pytest_counts_is_named(tmp_path: Path, flags: tuple[str, ...]) -> None:
    output = run_pytest(tmp_path, *flags)
    assert pytest_total(output) == 89, output[-500:]
    tracker = TestTracker()
    verdict = tracker.observe(1, f"python -m pytest {' '.join(flags)} test_suite.py", output)
    assert len(verdict.results) == 89
    assert verdict.results["test_suite.py::test_prints_a_status_word_then_fails"].value == "failed"
    assert verdict.results["test_suite.py::test_prints_without_newline"].value == "passed"
    assert verdict.results["test_suite.py::TestK::test_prints_in_a_class"].value == "passed"
    line = tracker.status_line()
    assert line is not None and line.startswith("TEST STATUS: 89 tests (88 passed, 1 failed)")
