"""A toy repository with a failing test, and the scripted agent turns that fix it (for the e2e tests)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PYTHON = sys.executable
"""The venv's python, which has pytest: the agent's shell commands use it."""

CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
TESTS = (
    "from calc import add, mul\n\n\n"
    "def test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_mul():\n    assert mul(2, 3) == 6\n"
)

TASK = "test_add in test_calc.py fails: add(2, 3) should be 5. Fix calc.py."
PYTEST = f"{PYTHON} -m pytest -v -p no:cacheprovider test_calc.py"
FIX_TURNS: list[tuple[str, str]] = [
    ("Let me look at the repository first.", "ls"),
    ("Run the tests to see the failure.", PYTEST),
    ("The failure points at add in calc.py; read it.", "cat calc.py"),
    ("add subtracts instead of adding: fix calc.py.", "sed -i 's/return a - b/return a + b/' calc.py"),
    ("Run the tests again to confirm the fix.", PYTEST),
    ("Check the diff of calc.py.", "git diff -- calc.py"),
    ("Submit.", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff -- calc.py"),
]
"""(thought, command) per model turn: view, failing run, read, edit, passing run, diff, submit."""


def make_repo(root: Path) -> Path:
    """A git repository with calc.py (add is wrong) and test_calc.py (test_add fails, test_mul passes)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "calc.py").write_text(CALC)
    (root / "test_calc.py").write_text(TESTS)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "."], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "start"], cwd=root, check=True)
    return root


def text_output(thought: str, command: str) -> dict:
    """A mini-swe-agent text-protocol model turn (the command in a mswea_bash_command block)."""
    from minisweagent.models.test_models import make_output

    content = f"THOUGHT: {thought}\n\n```mswea_bash_command\n{command}\n```"
    return make_output(content, [{"command": command}], cost=0.0)
