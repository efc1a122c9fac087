"""A tiny git repository for the agent examples: `add` subtracts, and a test says so."""

from __future__ import annotations

import subprocess
from pathlib import Path


def make_repo(root: Path, test_f3: bool = False) -> None:
    """`calc.py` (the bug and twelve helpers, so outputs have some length) and `test_calc.py`, committed;
    `test_f3` adds a passing test of a helper."""
    functions = "".join(
        f"\n\ndef f{n}(x):\n    '''Helper number {n}.'''\n    return x * {n}\n" for n in range(12)
    )
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n" + functions)
    imports = "add, f3" if test_f3 else "add"
    tests = f"from calc import {imports}\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    if test_f3:
        tests += "\n\ndef test_f3():\n    assert f3(2) == 6\n"
    (root / "test_calc.py").write_text(tests)
    for args in (
        ["init", "-q"],
        ["add", "."],
        ["-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "start"],
    ):
        subprocess.run(["git", *args], cwd=root, check=True)
